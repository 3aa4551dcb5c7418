#pragma once
// libgeonames (Debian's libgeonames0, libgeonames-dev): the GeoNames cities of 15,000 people or
// more (CC BY 4.0), with their first-level division, country, time zone and population,
// compiled into the library. Its header pulls in all of GIO; photod needs eight calls, declared
// here as <geonames/geonames.h> 0.3 declares them (gint = int, guint = unsigned, gdouble =
// double, gchar = char; a city is a GVariant, opaque here). Each city is read once and freed.
// Where each city is, for the gazetteer's load, is read from the city's GVariant bytes (GLib's
// documented serialisation; `Gazetteer.cityPoint`) after its type is checked: three calls
// instead of three getters, each of which parses a format string and makes child values.
typedef struct _GVariant GeonamesCity;
const char *g_variant_get_type_string(GeonamesCity *value);
const void *g_variant_get_data(GeonamesCity *value);
unsigned long g_variant_get_size(GeonamesCity *value);
int geonames_get_n_cities(void);
GeonamesCity *geonames_get_city(int index);
void geonames_city_free(GeonamesCity *city);
const char *geonames_city_get_name(GeonamesCity *city);
const char *geonames_city_get_state(GeonamesCity *city);
const char *geonames_city_get_country(GeonamesCity *city);
const char *geonames_city_get_country_code(GeonamesCity *city);
const char *geonames_city_get_timezone(GeonamesCity *city);
double geonames_city_get_latitude(GeonamesCity *city);
double geonames_city_get_longitude(GeonamesCity *city);
unsigned geonames_city_get_population(GeonamesCity *city);
