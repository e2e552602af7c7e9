/* hwdb's PostgreSQL schema (pg_schema.c), used by pg.c. */
#ifndef CDPLAN_HWDB_PG_INT_H
#define CDPLAN_HWDB_PG_INT_H

#include <stddef.h>

extern const char *const hwdb_pg_migrations[];
extern const size_t hwdb_pg_nmigrations;

#endif
