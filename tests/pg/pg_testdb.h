/* The _pg tests' database helper: the same test binary runs on SQLite
 * (default) or, when CDPLAN_TEST_PG_FILE names the state file pg_up.sh
 * wrote, on a fresh database of that throw-away PostgreSQL cluster. */
#ifndef CDPLAN_TESTS_PG_TESTDB_H
#define CDPLAN_TESTS_PG_TESTDB_H

#include <stddef.h>

/* 1 when the tests run on PostgreSQL. */
int testdb_is_pg(void);
/* A store for one test: on SQLite, sqlite_path copied into out; on
 * PostgreSQL, a new empty database's URI. 0, or -1 with the reason on
 * stderr (a missing or stopped cluster fails the test). */
int testdb_make(char *out, size_t size, const char *sqlite_path);
/* Run sql on the PostgreSQL database uri (no result); 0 or -1. */
int testdb_exec(const char *uri, const char *sql);
/* The first column of the first row of sql as an integer; -1 on failure. */
long long testdb_count(const char *uri, const char *sql);

#endif
