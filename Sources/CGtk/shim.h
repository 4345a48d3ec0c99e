#ifndef DEVICEID_CGTK_SHIM_H
#define DEVICEID_CGTK_SHIM_H

#include <gtk/gtk.h>

#endif
