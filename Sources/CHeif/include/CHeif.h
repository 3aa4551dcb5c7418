#pragma once
// libheif (libheif-dev), which decodes HEIC through libde265 and AVIF through dav1d/aom: its
// declarations, and photod's definitions of the functions it calls (heif.c), which open libheif
// at the first HEIF file rather than at every start. heif.h includes only <stddef.h> and
// <stdint.h>.
#include <libheif/heif.h>

/// Why libheif could not be opened, or NULL when it is open (or not tried yet).
const char *photod_heif_failure(void);
