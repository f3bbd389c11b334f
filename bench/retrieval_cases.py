"""The labelled set of `python -m bench retrieval`: memories (the cities scenario's own facts and
episodes of earlier runs) and queries with the memories that answer them.

Many queries are paraphrases that share few or no words with their memory ("where the Nobel
Prizes are handed out" for Stockholm's "most Nobel Prizes are awarded"): lexical ranking is
expected to miss some of them, which is what the embeddings row is for.
"""

from __future__ import annotations

EPISODES: dict[str, str] = {
    "ep-atlantis": "Run of 'Compare Paris, Atlantis and Tokyo' (cities) ended SUCCEEDED after 1 "
    "replan(s). No data: Atlantis. Failures: MISSING_INFO get_population(city=Atlantis): no "
    "data for a city called 'Atlantis'. Replans: attempt 2 dropped pop_atlantis, sum_atlantis, "
    "tz_atlantis.",
    "ep-eldorado": "Run of 'Compare Rome and El Dorado' (cities) ended SUCCEEDED after 1 "
    "replan(s). No data: El Dorado. Failures: MISSING_INFO get_timezone(city=El Dorado).",
    "ep-coop-game": "Run of 'Recommend a co-op game under 30 EUR for two players' (games) ended "
    "SUCCEEDED in one attempt. Verdict: the recommended game exists and is within budget.",
    "ep-checkout": "Run of 'Why did checkout latency spike at 14:00?' (incidents) ended "
    "SUCCEEDED in one attempt. Verdict: root cause named: a connection pool exhausted by the "
    "payments deploy.",
    "ep-refund-approved": "Run of 'Refund order A-1001' (refunds) ended SUCCEEDED in one "
    "attempt. The refund waited for approval, approved by human:ada, and was paid once.",
    "ep-refund-dispute": "Run of 'Refund order A-1005' (refunds) ended FAILED_EXECUTION. "
    "Failures: POLICY_VIOLATION submit_refund(order_id=A-1005): the order has an open dispute.",
    "ep-budget": "Run of 'Compare thirty capitals' (cities) ended BUDGET_EXHAUSTED. Verdict: "
    "budget exhausted: 12 node(s) not run; the token limit was reached.",
    "ep-rate-limit": "Run of 'Compare Lisbon and Oslo' (cities) ended SUCCEEDED in one attempt. "
    "Failures: RATE_LIMITED get_timezone(city=Lisbon): retried after the provider's 429.",
    "ep-vague": "Run of 'Compare' (cities) ended SUCCEEDED after 1 replan(s). The goal named "
    "no city; the user answered 'Berlin and Madrid'.",
    "ep-cancelled": "Run of 'Refund order A-1009' (refunds) ended CANCELLED. Verdict: "
    "cancelled: the customer withdrew the request (by human:bo).",
    "ep-judge": "Run of 'Compare Cairo and Lagos' (cities) ended FAILED_VERIFICATION. Verdict: "
    "the report does not mention Lagos; the judge scored it 0.4.",
    "ep-disk": "Run of 'Why is the search service returning 500s?' (incidents) ended SUCCEEDED. "
    "Verdict: root cause named: the disk of the index node is full.",
}

QUERIES: list[tuple[str, list[str]]] = [
    # The cities scenario's facts: named by city, resolved to their ids by the bench.
    ("famous landmarks in France", ["city:Paris"]),
    ("iron lattice tower built for a world's fair", ["city:Paris"]),
    ("where does the British parliament sit", ["city:London"]),
    ("city divided by a wall during the cold war", ["city:Berlin"]),
    ("Spanish art museum and royal palace", ["city:Madrid"]),
    ("ancient amphitheatre next to the Vatican", ["city:Rome"]),
    ("Dutch city of canals", ["city:Amsterdam"]),
    ("classical music and coffee houses", ["city:Vienna"]),
    ("trams and fado on the Tagus", ["city:Lisbon"]),
    ("where the Nobel Prizes are handed out", ["city:Stockholm"]),
    ("Kremlin and Red Square", ["city:Moscow"]),
    ("a city on two continents", ["city:Istanbul"]),
    ("Hagia Sophia", ["city:Istanbul"]),
    ("busiest pedestrian crossing", ["city:Tokyo"]),
    ("K-pop and technology hub", ["city:Seoul"]),
    ("the Forbidden City", ["city:Beijing"]),
    ("biggest container port in the world", ["city:Shanghai"]),
    ("city-state near Malaysia", ["city:Singapore"]),
    ("Bollywood", ["city:Mumbai"]),
    ("financial capital of India", ["city:Mumbai"]),
    ("Red Fort and Qutub Minar", ["city:Delhi"]),
    ("Thai temples and street food", ["city:Bangkok"]),
    ("largest city on Java", ["city:Jakarta"]),
    ("tallest building on earth", ["city:Dubai"]),
    ("pyramids by the Nile", ["city:Cairo"]),
    ("Nigerian film industry", ["city:Lagos"]),
    ("wildlife reserve inside a capital", ["city:Nairobi"]),
    ("flat-topped mountain above a South African city", ["city:Cape Town"]),
    ("Statue of Liberty", ["city:New York"]),
    ("headquarters of the United Nations", ["city:New York"]),
    ("movie studios of Hollywood", ["city:Los Angeles"]),
    ("birthplace of the skyscraper", ["city:Chicago"]),
    ("Canadian city with a tall tower", ["city:Toronto"]),
    ("built on the ruins of the Aztec capital", ["city:Mexico City"]),
    ("Brazilian stock exchange", ["city:São Paulo"]),
    ("where tango was born", ["city:Buenos Aires"]),
    ("city founded by a Spanish conquistador", ["city:Lima"]),
    ("capital high up in the Andes", ["city:Bogotá"]),
    ("opera house on a harbour", ["city:Sydney"]),
    ("city of sails on volcanoes", ["city:Auckland"]),
    ("capitals of Asian countries", ["city:Tokyo", "city:Seoul", "city:Beijing", "city:Bangkok"]),
    ("Chinese cities", ["city:Beijing", "city:Shanghai"]),
    ("Indian cities", ["city:Mumbai", "city:Delhi"]),
    ("film industry hubs", ["city:Mumbai", "city:Lagos", "city:Los Angeles"]),
    ("stock exchanges", ["city:Mumbai", "city:São Paulo"]),
    # Episodes of earlier runs.
    ("Compare Rome, Atlantis and Vienna", ["ep-atlantis"]),
    ("cities that had no data", ["ep-atlantis", "ep-eldorado"]),
    ("the mythical city of gold", ["ep-eldorado"]),
    ("a cheap game two friends can play together", ["ep-coop-game"]),
    ("recommend a co-op game", ["ep-coop-game"]),
    ("slow checkout, what went wrong", ["ep-checkout"]),
    ("incident root causes found before", ["ep-checkout", "ep-disk"]),
    ("refund that needed a person's approval", ["ep-refund-approved"]),
    ("refund refused because of a dispute", ["ep-refund-dispute"]),
    ("Refund order A-1005", ["ep-refund-dispute"]),
    ("runs that ran out of tokens", ["ep-budget"]),
    ("too many requests from the provider", ["ep-rate-limit"]),
    ("a goal so vague the user had to be asked", ["ep-vague"]),
    ("a request the customer withdrew", ["ep-cancelled"]),
    ("a report the critic rejected", ["ep-judge"]),
    ("search errors because storage filled up", ["ep-disk"]),
    ("Compare Cairo and Lagos", ["ep-judge", "city:Cairo", "city:Lagos"]),
]
