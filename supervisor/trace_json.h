/* Trace messages as JSON (for `stockade trace export --format jsonl|chrome`). */
#ifndef STOCKADE_TRACE_JSON_H
#define STOCKADE_TRACE_JSON_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stdio.h>

/* A JSON string literal of s: UTF-8 as it is, but for controls, C1 controls, U+2028/9 and
 * the bidirectional marks and overrides (\uXXXX); a byte that is not part of valid UTF-8 as
 * \udcXX, a lone surrogate (Python's surrogateescape), so that the bytes survive. */
void json_string(FILE *out, const char *s);
/* {"field": value, ...} */
void json_message(FILE *out, const ProtobufCMessage *m);
/* The fields only, each preceded by a comma unless `first`. */
void json_message_fields(FILE *out, const ProtobufCMessage *m, bool first);

#endif
