#include "cnats.h"

#include <nats/nats.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pn_client {
    natsConnection *nc;
    jsCtx *js;
    // Asynchronous errors (nats.c's error handler, on its own thread): count and last text.
    pthread_mutex_t lock;
    int64_t async_errors;
    char async_text[256];
};

static void on_async_error(natsConnection *nc, natsSubscription *sub, natsStatus s, void *closure) {
    (void)nc;
    (void)sub;
    pn_client *c = closure;
    const char *text = NULL;
    natsConnection_GetLastError(nc, &text);
    pthread_mutex_lock(&c->lock);
    c->async_errors++;
    snprintf(c->async_text, sizeof c->async_text, "%s", text && *text ? text : natsStatus_GetText(s));
    pthread_mutex_unlock(&c->lock);
}

int64_t pn_async_errors(pn_client *c, char *text, size_t textlen) {
    pthread_mutex_lock(&c->lock);
    int64_t n = c->async_errors;
    if (textlen) snprintf(text, textlen, "%s", c->async_text);
    pthread_mutex_unlock(&c->lock);
    return n;
}

// The last failure's codes, per thread (pn_last_js_error, pn_last_status).
static __thread int last_jerr;
static __thread int last_status;

int pn_last_js_error(void) { return last_jerr; }
int pn_last_status(void) { return last_status; }
int pn_status_no_responders(void) { return (int)NATS_NO_RESPONDERS; }

static void fail(char *err, size_t errlen, const char *what, natsStatus s, jsErrCode jerr) {
    last_jerr = (int)jerr;
    last_status = (int)s;
    const char *last = nats_GetLastError(NULL);
    if (jerr != 0) {
        snprintf(err, errlen, "%s: %s (JetStream error %d)", what, last && *last ? last : natsStatus_GetText(s), (int)jerr);
    } else {
        snprintf(err, errlen, "%s: %s", what, last && *last ? last : natsStatus_GetText(s));
    }
}

pn_client *pn_connect(const char *urls, const char *name, const char *creds, const char *ca,
                      int64_t reconnect_wait_ms, int64_t timeout_ms, char *err, size_t errlen) {
    natsOptions *opts = NULL;
    natsStatus s = natsOptions_Create(&opts);
    char *copy = strdup(urls);
    pn_client *c = calloc(1, sizeof *c);
    if (s == NATS_OK && (!copy || !c)) s = NATS_NO_MEMORY;
    if (c) pthread_mutex_init(&c->lock, NULL);
    const char *servers[64];
    int n = 0;
    for (char *save = NULL, *p = copy ? strtok_r(copy, ",", &save) : NULL; p && n < 64; p = strtok_r(NULL, ",", &save)) servers[n++] = p;
    if (s == NATS_OK) s = natsOptions_SetServers(opts, servers, n);
    if (s == NATS_OK && name) s = natsOptions_SetName(opts, name);
    if (s == NATS_OK) s = natsOptions_SetMaxReconnect(opts, -1);
    if (s == NATS_OK) s = natsOptions_SetReconnectWait(opts, reconnect_wait_ms);
    if (s == NATS_OK) s = natsOptions_SetTimeout(opts, timeout_ms);
    if (s == NATS_OK && creds) s = natsOptions_SetUserCredentialsFromFiles(opts, creds, NULL);
    if (s == NATS_OK && ca) s = natsOptions_LoadCATrustedCertificates(opts, ca);
    if (s == NATS_OK && ca) s = natsOptions_SetSecure(opts, true);
    if (s == NATS_OK) s = natsOptions_SetErrorHandler(opts, on_async_error, c);
    if (s == NATS_OK) s = natsConnection_Connect(&c->nc, opts);
    if (s == NATS_OK) s = natsConnection_JetStream(&c->js, c->nc, NULL);
    natsOptions_Destroy(opts);
    free(copy);
    if (s != NATS_OK) {
        fail(err, errlen, "cannot connect", s, 0);
        pn_close(c);
        return NULL;
    }
    return c;
}

void pn_close(pn_client *c) {
    if (!c) return;
    if (c->js) jsCtx_Destroy(c->js);
    if (c->nc) natsConnection_Destroy(c->nc);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

bool pn_connected(pn_client *c) { return natsConnection_Status(c->nc) == NATS_CONN_STATUS_CONNECTED; }

int64_t pn_max_payload(pn_client *c) { return natsConnection_GetMaxPayload(c->nc); }

int pn_ensure_stream(pn_client *c, const char *stream, const char *subjects, int64_t duplicates_ms,
                     int64_t replicas, int64_t max_age_ms, char *err, size_t errlen) {
    jsStreamInfo *si = NULL;
    jsErrCode jerr = 0;
    natsStatus s = js_GetStreamInfo(&si, c->js, stream, NULL, &jerr);
    if (s == NATS_OK) {
        jsStreamInfo_Destroy(si);
        return 0;
    }
    if (s != NATS_NOT_FOUND && jerr != JSStreamNotFoundErr) {
        fail(err, errlen, "cannot look the stream up", s, jerr);
        return -1;
    }
    jsStreamConfig cfg;
    jsStreamConfig_Init(&cfg);
    cfg.Name = stream;
    char *copy = strdup(subjects);
    if (!copy) {
        fail(err, errlen, "cannot create the stream", NATS_NO_MEMORY, 0);
        return -1;
    }
    const char *subs[16];
    int n = 0;
    for (char *save = NULL, *p = strtok_r(copy, ",", &save); p && n < 16; p = strtok_r(NULL, ",", &save)) subs[n++] = p;
    cfg.Subjects = subs;
    cfg.SubjectsLen = n;
    cfg.Storage = js_FileStorage;
    cfg.Duplicates = duplicates_ms * 1000000;
    cfg.Replicas = replicas;
    cfg.MaxAge = max_age_ms * 1000000;
    // The change sets are a record: nobody purges or deletes them through the API (an operator
    // who wants to edits the stream's configuration first).
    cfg.DenyDelete = true;
    cfg.DenyPurge = true;
    jerr = 0;
    s = js_AddStream(&si, c->js, &cfg, NULL, &jerr);
    free(copy);
    if (s != NATS_OK) {
        fail(err, errlen, "cannot create the stream", s, jerr);
        return -1;
    }
    jsStreamInfo_Destroy(si);
    return 1;
}

static void copy_header(natsMsg *m, const char *header, char *value, size_t valuelen) {
    const char *v = NULL;
    if (valuelen) value[0] = 0;
    if (header && natsMsgHeader_Get(m, header, &v) == NATS_OK && v) snprintf(value, valuelen, "%s", v);
}

int pn_last_header(pn_client *c, const char *stream, const char *subject, const char *header,
                   char *value, size_t valuelen, uint64_t *seq, char *err, size_t errlen) {
    natsMsg *m = NULL;
    jsErrCode jerr = 0;
    natsStatus s = js_GetLastMsg(&m, c->js, stream, subject, NULL, &jerr);
    if (s == NATS_NOT_FOUND || jerr == JSNoMessageFoundErr) return 0;
    if (s != NATS_OK) {
        fail(err, errlen, "cannot read the last message", s, jerr);
        return -1;
    }
    copy_header(m, header, value, valuelen);
    if (seq) *seq = natsMsg_GetSequence(m);
    natsMsg_Destroy(m);
    return 1;
}

int pn_publish(pn_client *c, const char *subject, const void *data, int len, const char **names,
               const char **values, int count, int64_t timeout_ms, uint64_t expect_last_subject_seq,
               uint64_t *seq, bool *duplicate, char *err, size_t errlen) {
    natsMsg *m = NULL;
    natsStatus s = natsMsg_Create(&m, subject, NULL, data, len);
    for (int i = 0; s == NATS_OK && i < count; i++) s = natsMsgHeader_Set(m, names[i], values[i]);
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = timeout_ms;
    po.ExpectLastSubjectSeq = expect_last_subject_seq;
    jsPubAck *ack = NULL;
    jsErrCode jerr = 0;
    if (s == NATS_OK) s = js_PublishMsg(&ack, c->js, m, &po, &jerr);
    natsMsg_Destroy(m);
    if (s != NATS_OK) {
        fail(err, errlen, "cannot publish", s, jerr);
        return -1;
    }
    if (seq) *seq = ack->Sequence;
    if (duplicate) *duplicate = ack->Duplicate;
    jsPubAck_Destroy(ack);
    return 0;
}

int pn_get(pn_client *c, const char *stream, uint64_t seq, char **subject, char **data, int *len,
           const char *header, char *value, size_t valuelen, char *err, size_t errlen) {
    natsMsg *m = NULL;
    jsErrCode jerr = 0;
    natsStatus s = js_GetMsg(&m, c->js, stream, seq, NULL, &jerr);
    if (s == NATS_NOT_FOUND || jerr == JSNoMessageFoundErr) return 0;
    if (s != NATS_OK) {
        fail(err, errlen, "cannot read the message", s, jerr);
        return -1;
    }
    *subject = strdup(natsMsg_GetSubject(m));
    *len = natsMsg_GetDataLength(m);
    *data = malloc((size_t)*len + 1);
    if (!*subject || !*data) {
        free(*subject);
        free(*data);
        natsMsg_Destroy(m);
        fail(err, errlen, "cannot read the message", NATS_NO_MEMORY, 0);
        return -1;
    }
    memcpy(*data, natsMsg_GetData(m), (size_t)*len);
    (*data)[*len] = 0;
    copy_header(m, header, value, valuelen);
    natsMsg_Destroy(m);
    return 1;
}

int64_t pn_last_seq(pn_client *c, const char *stream, char *err, size_t errlen) {
    jsStreamInfo *si = NULL;
    jsErrCode jerr = 0;
    natsStatus s = js_GetStreamInfo(&si, c->js, stream, NULL, &jerr);
    if (s == NATS_NOT_FOUND || jerr == JSStreamNotFoundErr) return -2;
    if (s != NATS_OK) {
        fail(err, errlen, "cannot look the stream up", s, jerr);
        return -1;
    }
    int64_t last = (int64_t)si->State.LastSeq;
    jsStreamInfo_Destroy(si);
    return last;
}

pn_sub *pn_subscribe(pn_client *c, const char *subject, const char *queue, int max_pending,
                     int max_pending_bytes, char *err, size_t errlen) {
    natsSubscription *sub = NULL;
    natsStatus s = queue ? natsConnection_QueueSubscribeSync(&sub, c->nc, subject, queue)
                         : natsConnection_SubscribeSync(&sub, c->nc, subject);
    if (s == NATS_OK) s = natsSubscription_SetPendingLimits(sub, max_pending, max_pending_bytes);
    if (s != NATS_OK) {
        fail(err, errlen, "cannot subscribe", s, 0);
        natsSubscription_Destroy(sub);
        return NULL;
    }
    return (pn_sub *)sub;
}

void pn_unsubscribe(pn_sub *s) {
    if (!s) return;
    natsSubscription_Unsubscribe((natsSubscription *)s);
    natsSubscription_Destroy((natsSubscription *)s);
}

int pn_next(pn_sub *sub, int64_t timeout_ms, pn_msg **m, char *err, size_t errlen) {
    natsMsg *msg = NULL;
    natsStatus s = natsSubscription_NextMsg(&msg, (natsSubscription *)sub, timeout_ms);
    if (s == NATS_TIMEOUT) return 0;
    // A slow consumer's dropped messages are the requesters' timeouts: go on with the next.
    if (s == NATS_SLOW_CONSUMER) return 0;
    if (s != NATS_OK) {
        fail(err, errlen, "cannot receive", s, 0);
        return -1;
    }
    *m = (pn_msg *)msg;
    return 1;
}

const char *pn_msg_subject(pn_msg *m) { return natsMsg_GetSubject((natsMsg *)m); }
const char *pn_msg_reply(pn_msg *m) { return natsMsg_GetReply((natsMsg *)m); }

const void *pn_msg_data(pn_msg *m, int *len) {
    *len = natsMsg_GetDataLength((natsMsg *)m);
    return natsMsg_GetData((natsMsg *)m);
}

const char *pn_msg_header(pn_msg *m, const char *name) {
    const char *v = NULL;
    return natsMsgHeader_Get((natsMsg *)m, name, &v) == NATS_OK ? v : NULL;
}

void pn_msg_free(pn_msg *m) { natsMsg_Destroy((natsMsg *)m); }

int pn_send(pn_client *c, const char *subject, const char *reply, const void *data, int len, const char **names,
            const char **values, int count, char *err, size_t errlen) {
    natsMsg *m = NULL;
    natsStatus s = natsMsg_Create(&m, subject, reply, data, len);
    for (int i = 0; s == NATS_OK && i < count; i++) s = natsMsgHeader_Set(m, names[i], values[i]);
    if (s == NATS_OK) s = natsConnection_PublishMsg(c->nc, m);
    natsMsg_Destroy(m);
    if (s != NATS_OK) {
        fail(err, errlen, "cannot send", s, 0);
        return -1;
    }
    return 0;
}

int pn_request(pn_client *c, const char *subject, const void *data, int len, int64_t timeout_ms,
               pn_msg **reply, char *err, size_t errlen) {
    natsMsg *r = NULL;
    natsStatus s = natsConnection_Request(&r, c->nc, subject, data, len, timeout_ms);
    if (s != NATS_OK) {
        fail(err, errlen, "no reply", s, 0);
        return -1;
    }
    *reply = (pn_msg *)r;
    return 0;
}

int pn_flush(pn_client *c, int64_t timeout_ms) {
    return natsConnection_FlushTimeout(c->nc, timeout_ms) == NATS_OK ? 0 : -1;
}
