// photod-nats's calls into nats.c (libnats-dev), each a whole step with its error as text: the
// Swift side needs no nats.c structure.
#ifndef CNATS_H
#define CNATS_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

typedef struct pn_client pn_client;

/// Connects to the servers of `urls` (comma-separated `nats://host:port`, user/password or
/// token in the URL) with `name` as the connection name, `creds` (a JWT/NKey credentials file)
/// and `ca` (a CA file for TLS) when not NULL. Reconnects forever after a loss, every
/// `reconnect_wait_ms` (with jitter). NULL and `err` filled when the first connection fails.
pn_client *pn_connect(const char *urls, const char *name, const char *creds, const char *ca,
                      int64_t reconnect_wait_ms, int64_t timeout_ms, char *err, size_t errlen);
void pn_close(pn_client *c);

/// Whether the connection is up now (not reconnecting or closed).
bool pn_connected(pn_client *c);

/// The largest message the server accepts (its `max_payload`).
int64_t pn_max_payload(pn_client *c);

/// Makes sure `stream` exists: 0 it did, 1 created (subjects `subjects`, comma-separated; file storage, the
/// deduplication window `duplicates_ms`, `replicas`, `max_age_ms` 0 for none), -1 error.
int pn_ensure_stream(pn_client *c, const char *stream, const char *subjects, int64_t duplicates_ms,
                     int64_t replicas, int64_t max_age_ms, char *err, size_t errlen);

/// The last message on `subject` in `stream`: 1 and its header `header`'s value copied to
/// `value` (empty when absent) and its sequence; 0 when the subject has none; -1 error.
int pn_last_header(pn_client *c, const char *stream, const char *subject, const char *header,
                   char *value, size_t valuelen, uint64_t *seq, char *err, size_t errlen);

/// Publishes `data` to JetStream on `subject` with headers (`names[i]`, `values[i]`) and waits
/// for the acknowledgment (`timeout_ms`): 0 and `*seq`, `*duplicate` filled; -1 error. With
/// `expect_last_subject_seq` not 0 the stream stores it only if the subject's last message has
/// that sequence (JetStream error 10071 otherwise).
int pn_publish(pn_client *c, const char *subject, const void *data, int len, const char **names,
               const char **values, int count, int64_t timeout_ms, uint64_t expect_last_subject_seq,
               uint64_t *seq, bool *duplicate, char *err, size_t errlen);

/// The JetStream error code (0 for none) and nats.c status of this thread's last failed call.
int pn_last_js_error(void);
int pn_last_status(void);
/// nats.c's status for "no responders" (nobody serves the subject: no stream covers it).
int pn_status_no_responders(void);

/// A message of `stream` by sequence (tests and tools): 1 found, 0 none, -1 error. `*subject`
/// and `*data` are malloc'd (free them); `header`'s value copied to `value`.
int pn_get(pn_client *c, const char *stream, uint64_t seq, char **subject, char **data, int *len,
           const char *header, char *value, size_t valuelen, char *err, size_t errlen);

/// The stream's last sequence (0 when empty), -2 when there is no such stream, or -1 and `err`.
int64_t pn_last_seq(pn_client *c, const char *stream, char *err, size_t errlen);

/// A message received on a subscription, or the reply to a request (nats.c's `natsMsg`).
typedef struct pn_msg pn_msg;
typedef struct pn_sub pn_sub;

/// Subscribes to `subject` (in the queue group `queue` when not NULL), for pn_next. Pending
/// messages are bounded by `max_pending` messages and `max_pending_bytes` (beyond: dropped,
/// their requesters time out). NULL and `err` on failure.
pn_sub *pn_subscribe(pn_client *c, const char *subject, const char *queue, int max_pending,
                     int max_pending_bytes, char *err, size_t errlen);
void pn_unsubscribe(pn_sub *s);

/// The next message of `s`: 1 and `*m` (free it with pn_msg_free), 0 after `timeout_ms`
/// without one, -1 and `err` when the subscription is closed or failed.
int pn_next(pn_sub *s, int64_t timeout_ms, pn_msg **m, char *err, size_t errlen);

const char *pn_msg_subject(pn_msg *m);
/// The reply subject, or NULL (not a request).
const char *pn_msg_reply(pn_msg *m);
const void *pn_msg_data(pn_msg *m, int *len);
/// A header's value, or NULL.
const char *pn_msg_header(pn_msg *m, const char *name);
void pn_msg_free(pn_msg *m);

/// Publishes `data` with headers to `subject` (core NATS, not JetStream: a reply), with the
/// reply subject `reply` when not NULL: 0, or -1 and `err`.
int pn_send(pn_client *c, const char *subject, const char *reply, const void *data, int len, const char **names,
            const char **values, int count, char *err, size_t errlen);

/// The asynchronous errors the server sent this connection (a permissions violation, a slow
/// consumer): how many so far, and the last one's text copied to `text`.
int64_t pn_async_errors(pn_client *c, char *text, size_t textlen);

/// Sends a request and waits `timeout_ms` for its reply: 0 and `*reply`, -1 and `err`
/// (pn_last_status is pn_status_no_responders when nobody serves the subject).
int pn_request(pn_client *c, const char *subject, const void *data, int len, int64_t timeout_ms,
               pn_msg **reply, char *err, size_t errlen);

/// Flushes what is buffered to the server, waiting at most `timeout_ms`: 0 or -1.
int pn_flush(pn_client *c, int64_t timeout_ms);

#endif
