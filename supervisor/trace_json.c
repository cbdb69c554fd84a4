/*
 * Any trace message as JSON, driven by protobuf-c's descriptors: every field of every
 * record, under its .proto name, enums by name, with no per-message code to keep in step
 * with trace.proto. Fields at their default value are left out (as protobuf's JSON mapping
 * does), except in repeated fields.
 */
#include "supervisor/trace_json.h"
#include "supervisor/util.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

void json_string(FILE *out, const char *s)
{
        fputc('"', out);
        for (const unsigned char *p = (const unsigned char *)s; *p;) {
                uint32_t cp;
                size_t n = utf8_char(p, &cp);

                if (n == 0) /* not UTF-8: the byte as a lone low surrogate (surrogateescape) */
                        fprintf(out, "\\u%04x", 0xdc00 | *p++);
                else if (cp == '"' || cp == '\\')
                        fprintf(out, "\\%c", (char)cp), p++;
                else if (cp == '\n')
                        fputs("\\n", out), p++;
                else if (cp == '\t')
                        fputs("\\t", out), p++;
                else if (cp < 0x20 || utf8_unsafe(cp))
                        fprintf(out, "\\u%04x", (unsigned)cp), p += n;
                else
                        fwrite(p, 1, n, out), p += n;
        }
        fputc('"', out);
}

static void value(FILE *out, const ProtobufCFieldDescriptor *f, const void *p);

static void scalar(FILE *out, const ProtobufCFieldDescriptor *f, const void *p)
{
        switch ((int)f->type) {
        case PROTOBUF_C_TYPE_INT32:
        case PROTOBUF_C_TYPE_SINT32:
        case PROTOBUF_C_TYPE_SFIXED32:
                fprintf(out, "%" PRId32, *(const int32_t *)p);
                break;
        case PROTOBUF_C_TYPE_UINT32:
        case PROTOBUF_C_TYPE_FIXED32:
                fprintf(out, "%" PRIu32, *(const uint32_t *)p);
                break;
        case PROTOBUF_C_TYPE_INT64:
        case PROTOBUF_C_TYPE_SINT64:
        case PROTOBUF_C_TYPE_SFIXED64:
                fprintf(out, "%" PRId64, *(const int64_t *)p);
                break;
        case PROTOBUF_C_TYPE_UINT64:
        case PROTOBUF_C_TYPE_FIXED64:
                fprintf(out, "%" PRIu64, *(const uint64_t *)p);
                break;
        case PROTOBUF_C_TYPE_FLOAT:
                fprintf(out, "%g", (double)*(const float *)p);
                break;
        case PROTOBUF_C_TYPE_DOUBLE:
                fprintf(out, "%g", *(const double *)p);
                break;
        case PROTOBUF_C_TYPE_BOOL:
                fputs(*(const protobuf_c_boolean *)p ? "true" : "false", out);
                break;
        case PROTOBUF_C_TYPE_ENUM: {
                const ProtobufCEnumValue *ev =
                        protobuf_c_enum_descriptor_get_value(f->descriptor, *(const int *)p);
                if (ev)
                        json_string(out, ev->name);
                else
                        fprintf(out, "%d", *(const int *)p);
                break;
        }
        case PROTOBUF_C_TYPE_STRING:
                json_string(out, *(char *const *)p ? *(char *const *)p : "");
                break;
        case PROTOBUF_C_TYPE_BYTES: {
                const ProtobufCBinaryData *b = p;
                fputc('"', out);
                for (size_t i = 0; i < b->len; i++)
                        fprintf(out, "%02x", b->data[i]);
                fputc('"', out);
                break;
        }
        case PROTOBUF_C_TYPE_MESSAGE:
                json_message(out, *(const ProtobufCMessage *const *)p);
                break;
        }
}

static size_t scalar_size(const ProtobufCFieldDescriptor *f)
{
        switch ((int)f->type) {
        case PROTOBUF_C_TYPE_INT64:
        case PROTOBUF_C_TYPE_SINT64:
        case PROTOBUF_C_TYPE_SFIXED64:
        case PROTOBUF_C_TYPE_UINT64:
        case PROTOBUF_C_TYPE_FIXED64:
        case PROTOBUF_C_TYPE_DOUBLE:
                return 8;
        case PROTOBUF_C_TYPE_STRING:
        case PROTOBUF_C_TYPE_MESSAGE:
                return sizeof(void *);
        case PROTOBUF_C_TYPE_BYTES:
                return sizeof(ProtobufCBinaryData);
        case PROTOBUF_C_TYPE_BOOL:
                return sizeof(protobuf_c_boolean);
        case PROTOBUF_C_TYPE_ENUM:
                return sizeof(int);
        default:
                return 4;
        }
}

static void value(FILE *out, const ProtobufCFieldDescriptor *f, const void *p)
{
        scalar(out, f, p);
}

/* Is the singular field at p at its default (and so left out)? */
static bool is_default(const ProtobufCFieldDescriptor *f, const void *p)
{
        switch ((int)f->type) {
        case PROTOBUF_C_TYPE_STRING:
                return !*(char *const *)p || !**(char *const *)p;
        case PROTOBUF_C_TYPE_MESSAGE:
                return !*(void *const *)p;
        case PROTOBUF_C_TYPE_BYTES:
                return !((const ProtobufCBinaryData *)p)->len;
        default: {
                static const char zero[16];
                return memcmp(p, zero, scalar_size(f)) == 0;
        }
        }
}

void json_message_fields(FILE *out, const ProtobufCMessage *m, bool first)
{
        const ProtobufCMessageDescriptor *d = m->descriptor;

        for (unsigned i = 0; i < d->n_fields; i++) {
                const ProtobufCFieldDescriptor *f = &d->fields[i];
                const char *base = (const char *)m + f->offset;

                if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
                        uint32_t which =
                                *(const uint32_t *)((const char *)m + f->quantifier_offset);
                        if (which != f->id)
                                continue;
                } else if (f->label == PROTOBUF_C_LABEL_REPEATED) {
                        size_t n = *(const size_t *)((const char *)m + f->quantifier_offset);
                        const char *arr = *(char *const *)base;
                        if (!n)
                                continue;
                        fprintf(out, "%s\"%s\":[", first ? "" : ",", f->name);
                        for (size_t k = 0; k < n; k++) {
                                if (k)
                                        fputc(',', out);
                                value(out, f, arr + k * scalar_size(f));
                        }
                        fputc(']', out);
                        first = false;
                        continue;
                } else if (is_default(f, base)) {
                        continue;
                }
                fprintf(out, "%s\"%s\":", first ? "" : ",", f->name);
                value(out, f, base);
                first = false;
        }
}

void json_message(FILE *out, const ProtobufCMessage *m)
{
        fputc('{', out);
        json_message_fields(out, m, true);
        fputc('}', out);
}
