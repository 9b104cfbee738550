"""Builds the demo collection: small realistic SQLite databases whose stored values differ from how people write
them ('LA' for Los Angeles, 'F' for female, 'CS' for computer science, airport codes, state codes).

Deterministic for a given seed; rebuilt from this script, never shipped as binary files.
"""
import os
import random
import sqlite3

from .. import outputs

CITIES = [  # full name, abbreviation used by restaurants, state code, state, population, area km2
    ("Los Angeles", "LA", "CA", "California", 3898747, 1302),
    ("San Francisco", "SF", "CA", "California", 873965, 121),
    ("New York City", "NYC", "NY", "New York", 8804190, 783),
    ("Chicago", "CHI", "IL", "Illinois", 2746388, 606),
    ("Seattle", "SEA", "WA", "Washington", 737015, 217),
    ("Boston", "BOS", "MA", "Massachusetts", 675647, 232),
    ("Houston", "HOU", "TX", "Texas", 2304580, 1651),
    ("Miami", "MIA", "FL", "Florida", 442241, 143),
]
FIRST = ["Todd", "Maria", "James", "Aiko", "Carlos", "Priya", "Olivia", "Noah", "Fatima", "Liam", "Chen", "Emma",
         "Lucas", "Sofia", "Omar", "Grace", "Mateo", "Hana", "Ethan", "Zoe"]
LAST = ["Casey", "Garcia", "Smith", "Tanaka", "Rossi", "Patel", "Johnson", "Kim", "Haddad", "Nguyen", "Wang",
        "Brown", "Silva", "Novak", "Ali", "Lee", "Lopez", "Sato", "Miller", "Dubois"]


def _person(rng):
    return f"{rng.choice(FIRST)} {rng.choice(LAST)}"


def _restaurants(db, rng):
    db.executescript("""
        CREATE TABLE restaurant (id INTEGER PRIMARY KEY, name TEXT, food_type TEXT, city TEXT, rating REAL,
                                 price_range TEXT);
        CREATE TABLE review (id INTEGER PRIMARY KEY, restaurant_id INTEGER REFERENCES restaurant(id),
                             reviewer TEXT, stars INTEGER, review_date TEXT);
    """)
    foods = ["Italian", "Mexican", "Japanese", "Chinese", "Indian", "French", "Thai", "American"]
    words = ["Golden", "Blue", "Little", "Royal", "Green", "Sunny", "Old", "Lucky"]
    nouns = ["Spoon", "Garden", "Table", "Kitchen", "Bistro", "House", "Corner", "Oven"]
    for i in range(1, 121):
        city = CITIES[i % len(CITIES)][1]
        db.execute("INSERT INTO restaurant VALUES (?,?,?,?,?,?)",
                   (i, f"{rng.choice(words)} {rng.choice(nouns)} {i}", rng.choice(foods), city,
                    round(rng.uniform(2.5, 5.0), 1), rng.choice(["$", "$$", "$$$", "$$$$"])))
    for i in range(1, 401):
        db.execute("INSERT INTO review VALUES (?,?,?,?,?)",
                   (i, rng.randint(1, 120), _person(rng), rng.randint(1, 5),
                    f"2023-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"))


def _hospitals(db, rng):
    db.executescript("""
        CREATE TABLE hospital (id INTEGER PRIMARY KEY, name TEXT, city TEXT, state TEXT, beds INTEGER,
                               trauma_center TEXT);
        CREATE TABLE doctor (id INTEGER PRIMARY KEY, name TEXT, specialty TEXT, gender TEXT,
                             hospital_id INTEGER REFERENCES hospital(id), years_experience INTEGER);
    """)
    kinds = ["General", "Memorial", "Children's", "University", "Mercy", "St. Mary's"]
    for i in range(1, 41):
        city, _, state_code, _, _, _ = CITIES[i % len(CITIES)]
        db.execute("INSERT INTO hospital VALUES (?,?,?,?,?,?)",
                   (i, f"{city} {kinds[i % len(kinds)]} Hospital", city, state_code, rng.randint(80, 900),
                    rng.choice(["Y", "N"])))
    specialties = ["Cardiology", "Oncology", "Pediatrics", "Neurology", "Emergency Medicine", "Orthopedics"]
    for i in range(1, 201):
        db.execute("INSERT INTO doctor VALUES (?,?,?,?,?,?)",
                   (i, "Dr. " + _person(rng), rng.choice(specialties), rng.choice(["F", "M"]),
                    rng.randint(1, 40), rng.randint(1, 35)))


def _world_cities(db, rng):
    db.executescript("""
        CREATE TABLE state (code TEXT PRIMARY KEY, name TEXT, capital TEXT);
        CREATE TABLE city (id INTEGER PRIMARY KEY, name TEXT, state_code TEXT REFERENCES state(code),
                           population INTEGER, area_km2 REAL, founded_year INTEGER);
    """)
    capitals = {"CA": "Sacramento", "NY": "Albany", "IL": "Springfield", "WA": "Olympia", "MA": "Boston",
                "TX": "Austin", "FL": "Tallahassee"}
    for _, _, code, name, _, _ in CITIES:
        db.execute("INSERT OR IGNORE INTO state VALUES (?,?,?)", (code, name, capitals[code]))
    for i, (name, _, code, _, population, area) in enumerate(CITIES, start=1):
        db.execute("INSERT INTO city VALUES (?,?,?,?,?,?)",
                   (i, name, code, population, area, rng.randint(1630, 1900)))


def _singers(db, rng):
    db.executescript("""
        CREATE TABLE singer (singer_id INTEGER PRIMARY KEY, name TEXT, country TEXT, age INTEGER, gender TEXT,
                             genre TEXT);
        CREATE TABLE concert (concert_id INTEGER PRIMARY KEY, concert_name TEXT, venue TEXT, year INTEGER);
        CREATE TABLE singer_in_concert (concert_id INTEGER REFERENCES concert(concert_id),
                                        singer_id INTEGER REFERENCES singer(singer_id),
                                        PRIMARY KEY (concert_id, singer_id));
    """)
    genres = ["Pop", "Rock", "Jazz", "Hip hop", "Country", "R&B"]
    countries = ["United States", "United Kingdom", "Canada", "Japan", "Brazil", "France"]
    for i in range(1, 61):
        db.execute("INSERT INTO singer VALUES (?,?,?,?,?,?)",
                   (i, _person(rng), rng.choice(countries), rng.randint(18, 70), rng.choice(["F", "M"]),
                    rng.choice(genres)))
    venues = ["Hollywood Bowl", "Madison Square Garden", "Red Rocks", "Royal Albert Hall", "Budokan"]
    for i in range(1, 31):
        db.execute("INSERT INTO concert VALUES (?,?,?,?)",
                   (i, f"{rng.choice(['Summer', 'Winter', 'Spring', 'Autumn'])} Tour {2015 + i % 9}",
                    rng.choice(venues), 2015 + i % 9))
        for singer in rng.sample(range(1, 61), 3):
            db.execute("INSERT INTO singer_in_concert VALUES (?,?)", (i, singer))


def _employees(db, rng):
    db.executescript("""
        CREATE TABLE department (dept_id INTEGER PRIMARY KEY, dept_name TEXT, budget INTEGER);
        CREATE TABLE employee (emp_id INTEGER PRIMARY KEY, first_name TEXT, last_name TEXT,
                               dept_id INTEGER REFERENCES department(dept_id), salary INTEGER, hire_date TEXT,
                               office_city TEXT);
    """)
    departments = ["R&D", "HR", "Sales", "Mktg", "Fin", "IT Ops"]
    for i, name in enumerate(departments, start=1):
        db.execute("INSERT INTO department VALUES (?,?,?)", (i, name, rng.randint(5, 50) * 100000))
    for i in range(1, 151):
        db.execute("INSERT INTO employee VALUES (?,?,?,?,?,?,?)",
                   (i, rng.choice(FIRST), rng.choice(LAST), rng.randint(1, len(departments)),
                    rng.randint(45, 180) * 1000,
                    f"{rng.randint(2010, 2024)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                    rng.choice(CITIES)[1]))


def _flights(db, rng):
    db.executescript("""
        CREATE TABLE airport (code TEXT PRIMARY KEY, airport_name TEXT, city TEXT);
        CREATE TABLE airline (airline_id INTEGER PRIMARY KEY, iata TEXT, airline_name TEXT);
        CREATE TABLE flight (flight_id INTEGER PRIMARY KEY, airline_id INTEGER REFERENCES airline(airline_id),
                             source TEXT REFERENCES airport(code), destination TEXT REFERENCES airport(code),
                             departure TEXT, duration_min INTEGER, price_usd REAL);
    """)
    airports = [("LAX", "Los Angeles International", "Los Angeles"), ("SFO", "San Francisco International",
                "San Francisco"), ("JFK", "John F. Kennedy International", "New York City"),
                ("ORD", "O'Hare International", "Chicago"), ("SEA", "Seattle-Tacoma International", "Seattle"),
                ("BOS", "Logan International", "Boston"), ("IAH", "George Bush Intercontinental", "Houston"),
                ("MIA", "Miami International", "Miami")]
    db.executemany("INSERT INTO airport VALUES (?,?,?)", airports)
    airlines = [(1, "UA", "United Airlines"), (2, "DL", "Delta Air Lines"), (3, "AA", "American Airlines"),
                (4, "AS", "Alaska Airlines"), (5, "B6", "JetBlue Airways")]
    db.executemany("INSERT INTO airline VALUES (?,?,?)", airlines)
    codes = [a[0] for a in airports]
    for i in range(1, 301):
        source, destination = rng.sample(codes, 2)
        db.execute("INSERT INTO flight VALUES (?,?,?,?,?,?,?)",
                   (i, rng.randint(1, len(airlines)), source, destination,
                    f"2024-06-{rng.randint(1, 30):02d} {rng.randint(5, 22):02d}:{rng.choice(['00', '15', '30', '45'])}",
                    rng.randint(60, 390), round(rng.uniform(89, 650), 2)))


def _university(db, rng):
    db.executescript("""
        CREATE TABLE student (student_id INTEGER PRIMARY KEY, name TEXT, major TEXT, gpa REAL, home_state TEXT,
                              enrollment_year INTEGER);
        CREATE TABLE course (course_id TEXT PRIMARY KEY, title TEXT, credits INTEGER);
        CREATE TABLE enrollment (student_id INTEGER REFERENCES student(student_id),
                                 course_id TEXT REFERENCES course(course_id), grade TEXT);
    """)
    majors = ["CS", "EE", "MATH", "BIO", "ECON", "HIST"]
    for i in range(1, 201):
        db.execute("INSERT INTO student VALUES (?,?,?,?,?,?)",
                   (i, _person(rng), rng.choice(majors), round(rng.uniform(2.0, 4.0), 2),
                    rng.choice(CITIES)[2], rng.randint(2018, 2024)))
    courses = [("CS101", "Intro to Programming", 4), ("CS220", "Databases", 3), ("EE201", "Circuits", 4),
               ("MATH150", "Calculus I", 4), ("BIO110", "Cell Biology", 3), ("ECON101", "Microeconomics", 3),
               ("HIST210", "Modern History", 3)]
    db.executemany("INSERT INTO course VALUES (?,?,?)", courses)
    for student in range(1, 201):
        for course in rng.sample(courses, 3):
            db.execute("INSERT INTO enrollment VALUES (?,?,?)",
                       (student, course[0], rng.choice(["A", "A-", "B+", "B", "C", "F"])))


BUILDERS = {
    "restaurants": _restaurants,
    "hospitals": _hospitals,
    "world_cities": _world_cities,
    "singers": _singers,
    "employees": _employees,
    "flights": _flights,
    "university": _university,
}

DESCRIPTIONS = {
    "restaurants": "Restaurants with their cuisine, city, rating and price, and customer reviews.",
    "hospitals": "Hospitals, the cities they are in, and the doctors who work there.",
    "world_cities": "General facts about cities and states: population, area, founding year, capitals.",
    "singers": "Singers, their concerts and venues.",
    "employees": "A company's employees, departments, salaries and offices.",
    "flights": "Airports, airlines and scheduled flights with prices.",
    "university": "University students, majors, GPA, courses and grades.",
}


def build_collection(folder, seed=0):
    """Writes one <name>/<name>.sqlite per database into `folder`, keeping the ones already there; returns the list
    of paths."""
    paths = []
    for name, builder in BUILDERS.items():
        path = os.path.join(folder, name, f"{name}.sqlite")
        paths.append(path)
        if os.path.exists(path):
            continue
        with outputs.new_file(path, "--dir") as temporary:
            db = sqlite3.connect(temporary)
            try:
                builder(db, random.Random(f"{seed}:{name}"))
                db.commit()
            finally:
                db.close()
    return paths
