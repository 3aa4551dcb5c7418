#pragma once
// libheif (libheif-dev), which decodes HEIC through libde265 and AVIF through dav1d/aom.
// heif.h includes only <stddef.h> and <stdint.h>.
#include <libheif/heif.h>
