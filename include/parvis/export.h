/** @file
 * PV_API marks the functions of the public API: the library is built with
 * -fvisibility=hidden, so only what carries PV_API leaves libparvis.so.
 * Every function declared in the public headers needs it (tests/
 * test_symbols.sh checks both ways). */
#ifndef PARVIS_EXPORT_H
#define PARVIS_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
/** Marks a function of the public API (exported from libparvis.so). */
#define PV_API __attribute__((visibility("default")))
#else
#define PV_API
#endif

#endif
