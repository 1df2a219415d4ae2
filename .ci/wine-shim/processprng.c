/*
 * bcryptprimitives.dll for wine 8.0, which has none.
 *
 * Go 1.22 and later load bcryptprimitives.dll from system32 at start and
 * take ProcessPrng from it for every random byte (the runtime's seed,
 * crypto/rand); without it a Go executable dies with "bcryptprimitives.dll
 * not found" before main. Go imports nothing else from this DLL.
 *
 * ProcessPrng here draws from wine's BCryptGenRandom (bcrypt.dll) with
 * the system-preferred RNG, in pieces of at most ULONG_MAX bytes since
 * BCryptGenRandom takes a ULONG length and ProcessPrng a SIZE_T. Like
 * Windows' own, it always reports success; if wine's RNG ever failed it
 * stops the process rather than hand back unrandom bytes.
 *
 * A test-harness artifact: .ci/wine builds it with mingw-w64 and puts it
 * in the wine prefix. It is never linked into srt.
 */
#include <windows.h>
#include <bcrypt.h>

#ifndef BCRYPT_USE_SYSTEM_PREFERRED_RNG
#define BCRYPT_USE_SYSTEM_PREFERRED_RNG 0x00000002
#endif

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
	while (len > 0) {
		ULONG n = len > 0xFFFFFFFFu ? 0xFFFFFFFFu : (ULONG)len;
		if (BCryptGenRandom(NULL, data, n, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0)
			ExitProcess(0xC0000001); /* STATUS_UNSUCCESSFUL */
		data += n;
		len -= n;
	}
	return TRUE;
}

BOOL WINAPI DllMain(HINSTANCE inst, DWORD reason, LPVOID reserved)
{
	(void)inst; (void)reason; (void)reserved;
	return TRUE;
}
