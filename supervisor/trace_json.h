/* Trace messages as JSON (for `stockade trace export --format jsonl|chrome`). */
#ifndef STOCKADE_TRACE_JSON_H
#define STOCKADE_TRACE_JSON_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stdio.h>

/* A JSON string literal of s (bytes >= 0x7f as \u00XX: lossless, always valid JSON). */
void json_string(FILE *out, const char *s);
/* {"field": value, ...} */
void json_message(FILE *out, const ProtobufCMessage *m);
/* The fields only, each preceded by a comma unless `first`. */
void json_message_fields(FILE *out, const ProtobufCMessage *m, bool first);

#endif
