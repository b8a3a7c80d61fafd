/* tpm2-tss: types and constants only. The module links nothing: the ESAPI and TCTI
 * libraries (which pull in OpenSSL) are dlopen'ed only when a TPM is actually used, so
 * every other keygate start-up stays free of them. */
#include <tss2/tss2_esys.h>
#include <tss2/tss2_tctildr.h>
#include <tss2/tss2_rc.h>
