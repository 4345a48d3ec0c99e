#ifndef DEVICEID_CTSS2_SHIM_H
#define DEVICEID_CTSS2_SHIM_H

/* The TPM Software Stack: ESAPI, its marshaling, the TCTI loader and response-code decoding. Only headers: every call
 * is made from Swift (TPMSupport/ESAPI). */

#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_tctildr.h>
#include <tss2/tss2_rc.h>

#endif
