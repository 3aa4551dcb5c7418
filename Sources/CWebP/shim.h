#pragma once
// libwebp's decoder (libwebp-dev). webp/types.h includes <stddef.h> and <inttypes.h> only.
#include <webp/decode.h>
