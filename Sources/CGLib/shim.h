#ifndef DEVICEID_CGLIB_SHIM_H
#define DEVICEID_CGLIB_SHIM_H

#include <glib.h>
#include <glib-unix.h>

#endif
