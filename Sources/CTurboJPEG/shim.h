#pragma once
// libjpeg-turbo's TurboJPEG API (libturbojpeg0-dev). turbojpeg.h includes no system header.
#include <turbojpeg.h>
