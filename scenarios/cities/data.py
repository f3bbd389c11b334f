"""Reference data for the cities scenario: population, timezone and what each city is known for.

Populations are city-proper figures from national statistics offices (rounded); they are demo data,
not a live source.
"""

from __future__ import annotations

from pydantic import BaseModel


class CityRecord(BaseModel):
    name: str  # canonical display name, e.g. "New York"
    country: str
    population: int  # city proper
    population_year: int
    timezone: str  # IANA name, e.g. "America/New_York"
    utc_offset: str  # standard-time offset, e.g. "-05:00", "+05:30"
    known_for: str  # one factual sentence, <= 140 chars
    aliases: list[str] = []  # other names a user may type, e.g. ["NYC", "New York City"]


CITIES: tuple[CityRecord, ...] = (
    # --- Europe ---
    CityRecord(
        name="Paris",
        country="France",
        population=2_100_000,
        population_year=2021,
        timezone="Europe/Paris",
        utc_offset="+01:00",
        known_for="Home to the Eiffel Tower, built for the 1889 World's Fair, and the Louvre, "
        "the world's most-visited art museum.",
    ),
    CityRecord(
        name="London",
        country="United Kingdom",
        population=8_800_000,  # Greater London (ONS census)
        population_year=2021,
        timezone="Europe/London",
        utc_offset="+00:00",
        known_for="Capital of the United Kingdom, home to the Palace of Westminster and the "
        "Tower of London.",
    ),
    CityRecord(
        name="Berlin",
        country="Germany",
        population=3_660_000,
        population_year=2023,
        timezone="Europe/Berlin",
        utc_offset="+01:00",
        known_for="German capital whose Brandenburg Gate and Wall remnants recall the city's "
        "division from 1961 to 1989.",
    ),
    CityRecord(
        name="Madrid",
        country="Spain",
        population=3_330_000,
        population_year=2023,
        timezone="Europe/Madrid",
        utc_offset="+01:00",
        known_for="Spain's capital, home to the Prado Museum and the Royal Palace of Madrid.",
    ),
    CityRecord(
        name="Rome",
        country="Italy",
        population=2_750_000,
        population_year=2023,
        timezone="Europe/Rome",
        utc_offset="+01:00",
        known_for="Italy's capital, known for the Colosseum and the Roman Forum; it surrounds "
        "Vatican City.",
        aliases=["Roma"],
    ),
    CityRecord(
        name="Amsterdam",
        country="Netherlands",
        population=920_000,
        population_year=2023,
        timezone="Europe/Amsterdam",
        utc_offset="+01:00",
        known_for="Capital of the Netherlands, known for its 17th-century canal ring and the "
        "Rijksmuseum.",
    ),
    CityRecord(
        name="Vienna",
        country="Austria",
        population=2_010_000,
        population_year=2024,
        timezone="Europe/Vienna",
        utc_offset="+01:00",
        known_for="Austria's capital, famed for classical music, Schönbrunn Palace and its "
        "coffee houses.",
        aliases=["Wien"],
    ),
    CityRecord(
        name="Lisbon",
        country="Portugal",
        population=545_000,
        population_year=2021,
        timezone="Europe/Lisbon",
        utc_offset="+00:00",
        known_for="Portugal's hilly capital on the Tagus estuary, known for its trams, Belém "
        "Tower and fado music.",
        aliases=["Lisboa"],
    ),
    CityRecord(
        name="Stockholm",
        country="Sweden",
        population=985_000,
        population_year=2023,
        timezone="Europe/Stockholm",
        utc_offset="+01:00",
        known_for="Sweden's capital, built across 14 islands, where most Nobel Prizes are "
        "awarded each December.",
    ),
    CityRecord(
        name="Moscow",
        country="Russia",
        population=13_010_000,
        population_year=2021,
        timezone="Europe/Moscow",
        utc_offset="+03:00",
        known_for="Russia's capital, home to the Kremlin, Red Square and St. Basil's Cathedral.",
        aliases=["Moskva"],
    ),
    CityRecord(
        name="Istanbul",
        country="Turkey",
        population=15_660_000,
        population_year=2023,
        timezone="Europe/Istanbul",
        utc_offset="+03:00",
        known_for="Turkey's largest city, spanning the Bosphorus between Europe and Asia; home "
        "to the Hagia Sophia.",
    ),
    # --- Asia ---
    CityRecord(
        name="Tokyo",
        country="Japan",
        population=14_000_000,  # Tokyo Metropolis (the 23 special wards alone: ~9.7 million)
        population_year=2023,
        timezone="Asia/Tokyo",
        utc_offset="+09:00",
        known_for="Japan's capital and site of the Imperial Palace; Shibuya Crossing is among "
        "the world's busiest.",
    ),
    CityRecord(
        name="Seoul",
        country="South Korea",
        population=9_390_000,
        population_year=2023,
        timezone="Asia/Seoul",
        utc_offset="+09:00",
        known_for="South Korea's capital, home to Gyeongbokgung Palace and a global hub of "
        "technology and K-pop.",
    ),
    CityRecord(
        name="Beijing",
        country="China",
        population=21_890_000,  # whole municipality, incl. rural districts
        population_year=2020,
        timezone="Asia/Shanghai",
        utc_offset="+08:00",
        known_for="China's capital, home to the Forbidden City and Tiananmen Square; parts of "
        "the Great Wall lie within it.",
        aliases=["Peking"],
    ),
    CityRecord(
        name="Shanghai",
        country="China",
        population=24_870_000,  # whole municipality
        population_year=2020,
        timezone="Asia/Shanghai",
        utc_offset="+08:00",
        known_for="China's largest city and financial hub, known for the Bund waterfront and "
        "the world's busiest container port.",
    ),
    CityRecord(
        name="Singapore",
        country="Singapore",
        population=5_920_000,  # total population of the city-state
        population_year=2023,
        timezone="Asia/Singapore",
        utc_offset="+08:00",
        known_for="City-state at the southern tip of the Malay Peninsula and a global shipping "
        "and financial hub.",
    ),
    CityRecord(
        name="Mumbai",
        country="India",
        population=12_440_000,
        population_year=2011,
        timezone="Asia/Kolkata",
        utc_offset="+05:30",
        known_for="India's financial capital, home to the Bombay Stock Exchange and the Hindi "
        "film industry, Bollywood.",
        aliases=["Bombay"],
    ),
    CityRecord(
        name="Delhi",
        country="India",
        population=16_790_000,  # National Capital Territory of Delhi
        population_year=2011,
        timezone="Asia/Kolkata",
        utc_offset="+05:30",
        known_for="India's capital territory, containing New Delhi and landmarks such as the "
        "Red Fort and Qutub Minar.",
        aliases=["New Delhi"],
    ),
    CityRecord(
        name="Bangkok",
        country="Thailand",
        population=5_490_000,  # registered residents
        population_year=2023,
        timezone="Asia/Bangkok",
        utc_offset="+07:00",
        known_for="Thailand's capital, known for the Grand Palace, the temple of Wat Arun and "
        "its street food.",
        aliases=["Krung Thep"],
    ),
    CityRecord(
        name="Jakarta",
        country="Indonesia",
        population=10_560_000,
        population_year=2020,
        timezone="Asia/Jakarta",
        utc_offset="+07:00",
        known_for="Indonesia's largest city, on the north-west coast of Java, marked by the "
        "National Monument (Monas).",
    ),
    CityRecord(
        name="Dubai",
        country="United Arab Emirates",
        population=3_650_000,
        population_year=2023,
        timezone="Asia/Dubai",
        utc_offset="+04:00",
        known_for="Home to the Burj Khalifa, the world's tallest building since its completion "
        "in 2010.",
    ),
    # --- Africa ---
    CityRecord(
        name="Cairo",
        country="Egypt",
        population=9_540_000,  # Cairo Governorate
        population_year=2017,
        timezone="Africa/Cairo",
        utc_offset="+02:00",
        known_for="Egypt's capital on the Nile; the Giza pyramids stand on the western edge of "
        "Greater Cairo.",
    ),
    CityRecord(
        name="Lagos",
        country="Nigeria",
        population=7_940_000,  # metropolitan LGAs, last national census
        population_year=2006,
        timezone="Africa/Lagos",
        utc_offset="+01:00",
        known_for="Nigeria's largest city and commercial centre, and a hub of the Nollywood "
        "film industry.",
    ),
    CityRecord(
        name="Nairobi",
        country="Kenya",
        population=4_400_000,
        population_year=2019,
        timezone="Africa/Nairobi",
        utc_offset="+03:00",
        known_for="Kenya's capital, with Nairobi National Park, a wildlife reserve, inside the "
        "city limits.",
    ),
    CityRecord(
        name="Cape Town",
        country="South Africa",
        population=4_770_000,
        population_year=2022,
        timezone="Africa/Johannesburg",
        utc_offset="+02:00",
        known_for="South African city beneath Table Mountain and seat of the national Parliament.",
    ),
    # --- North America ---
    CityRecord(
        name="New York",
        country="United States",
        population=8_800_000,
        population_year=2020,
        timezone="America/New_York",
        utc_offset="-05:00",
        known_for="Home to the Statue of Liberty, Wall Street and the headquarters of the "
        "United Nations.",
        aliases=["NYC", "New York City"],
    ),
    CityRecord(
        name="Los Angeles",
        country="United States",
        population=3_900_000,
        population_year=2020,
        timezone="America/Los_Angeles",
        utc_offset="-08:00",
        known_for="Home of Hollywood and the centre of the US film and television industry.",
        aliases=["L.A."],
    ),
    CityRecord(
        name="Chicago",
        country="United States",
        population=2_750_000,
        population_year=2020,
        timezone="America/Chicago",
        utc_offset="-06:00",
        known_for="Lake Michigan city often called the birthplace of the skyscraper, home to "
        "the Willis Tower.",
    ),
    CityRecord(
        name="Toronto",
        country="Canada",
        population=2_790_000,
        population_year=2021,
        timezone="America/Toronto",
        utc_offset="-05:00",
        known_for="Canada's largest city and main financial centre, known for the CN Tower.",
    ),
    CityRecord(
        name="Mexico City",
        country="Mexico",
        population=9_210_000,
        population_year=2020,
        timezone="America/Mexico_City",
        utc_offset="-06:00",
        known_for="Mexico's capital, built on the ruins of the Aztec capital Tenochtitlan.",
        aliases=["CDMX", "Ciudad de México", "Ciudad de Mexico"],
    ),
    # --- South America ---
    CityRecord(
        name="São Paulo",
        country="Brazil",
        population=11_450_000,
        population_year=2022,
        timezone="America/Sao_Paulo",
        utc_offset="-03:00",
        known_for="Brazil's largest city and financial centre, home to the B3 stock exchange "
        "and Avenida Paulista.",
        aliases=["Sao Paulo"],
    ),
    CityRecord(
        name="Buenos Aires",
        country="Argentina",
        population=3_120_000,  # Autonomous City of Buenos Aires
        population_year=2022,
        timezone="America/Argentina/Buenos_Aires",
        utc_offset="-03:00",
        known_for="Argentina's capital on the Río de la Plata, known as a birthplace of tango "
        "and for the Teatro Colón.",
    ),
    CityRecord(
        name="Lima",
        country="Peru",
        population=8_570_000,  # Lima Province
        population_year=2017,
        timezone="America/Lima",
        utc_offset="-05:00",
        known_for="Peru's capital, founded by Francisco Pizarro in 1535, with a UNESCO-listed "
        "historic centre.",
    ),
    CityRecord(
        name="Bogotá",
        country="Colombia",
        population=7_410_000,
        population_year=2018,
        timezone="America/Bogota",
        utc_offset="-05:00",
        known_for="Colombia's capital, on an Andean plateau about 2,640 m above sea level, and "
        "home to the Gold Museum.",
        aliases=["Bogota"],
    ),
    # --- Oceania ---
    CityRecord(
        name="Sydney",
        country="Australia",
        population=5_450_000,  # Greater Sydney (the City of Sydney LGA is ~0.2 million)
        population_year=2023,
        timezone="Australia/Sydney",
        utc_offset="+10:00",
        known_for="Australia's largest city, known for the Sydney Opera House and the Sydney "
        "Harbour Bridge.",
    ),
    CityRecord(
        name="Auckland",
        country="New Zealand",
        population=1_660_000,
        population_year=2023,
        timezone="Pacific/Auckland",
        utc_offset="+12:00",
        known_for="New Zealand's largest city, built on a volcanic field and nicknamed the "
        "City of Sails.",
    ),
)


def _build_index(cities: tuple[CityRecord, ...]) -> dict[str, CityRecord]:
    """Map every lowercased canonical name and alias to its record; reject collisions."""
    index: dict[str, CityRecord] = {}
    for city in cities:
        for key in (city.name, *city.aliases):
            norm = key.strip().lower()
            existing = index.get(norm)
            if existing is not None and existing is not city:
                raise ValueError(f"{key!r} is used by both {existing.name} and {city.name}")
            index[norm] = city
    return index


_INDEX: dict[str, CityRecord] = _build_index(CITIES)


def find_city(name: str) -> CityRecord | None:
    """Case-insensitive lookup by name or alias; surrounding whitespace ignored."""
    return _INDEX.get(name.strip().lower())


def all_names() -> list[str]:
    """Every canonical name and alias, longest first (so 'New York City' matches before 'York')."""
    names = [n for city in CITIES for n in (city.name, *city.aliases)]
    return sorted(names, key=lambda n: (-len(n), n))
