/* Wine 8 (Debian 12) has no bcryptprimitives.dll; Rust's std asks it for ProcessPrng. Windows 10 and
   later ship it. This stand-in answers from RtlGenRandom, which Wine has. Test harness only. */
#include <windows.h>
BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
  while (length > 0) {
    ULONG part = length > 0x10000000 ? 0x10000000 : (ULONG)length;
    if (!SystemFunction036(data, part)) return FALSE;
    data += part;
    length -= part;
  }
  return TRUE;
}
