#ifndef PORTALAUTH_CJANSSON_SHIM_H
#define PORTALAUTH_CJANSSON_SHIM_H
#if !__has_include(<jansson.h>)
#error "jansson.h not found: install the Debian package libjansson-dev (scripts/setup installs the build packages)"
#endif
#include <jansson.h>

// json_typeof and json_decref are macros or inline helpers; typed wrappers, prefixed pa_.

/// The type of a JSON value (json_typeof is a macro).
static inline json_type pa_json_typeof(const json_t *value) { return json_typeof(value); }
/// Releases one reference (json_decref is an inline function taking a non-const pointer).
static inline void pa_json_decref(json_t *value) { json_decref(value); }
/// Flags for strict decoding: reject duplicate object keys, allow a bare scalar at top level.
static inline size_t pa_json_strict_decode_flags(void) { return JSON_REJECT_DUPLICATES | JSON_DECODE_ANY; }
/// Flags for encoding: keep insertion order, compact, allow any top-level value, escape nothing extra.
static inline size_t pa_json_encode_flags(int indent) { return JSON_PRESERVE_ORDER | JSON_ENCODE_ANY | JSON_INDENT(indent) | (indent == 0 ? JSON_COMPACT : 0); }
#endif
