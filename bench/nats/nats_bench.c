// The bus scenarios of `siomq bench` (tools/bench/bus_load.h) against nats-server, on Debian's libnats
// (the NATS C client), in the shapes `nats bench` measures: one connection per client, subscriber clocks
// from first to last message, JetStream publishes acknowledged in windows. bench/bus_compare.sh runs both.
//
//   nats_bench <url> pubsub  <seconds> <size> <subscribers>
//   nats_bench <url> request <seconds> <size>
//   nats_bench <url> stream  <seconds> <size> <window>
//   nats_bench <url> pull    <seconds> <size> <window>
// Prints one line: "<rate> <unit>" (and, for request, "p50_us p99_us").
#include <nats/nats.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void check(natsStatus s, const char* what) {
  if (s == NATS_OK) return;
  fprintf(stderr, "nats_bench: %s: %s\n", what, natsStatus_GetText(s));
  exit(1);
}

typedef struct {
  volatile int64_t count, first, last;
} Counter;

static void on_msg(natsConnection* nc, natsSubscription* sub, natsMsg* msg, void* closure) {
  (void)nc;
  (void)sub;
  Counter* c = closure;
  int64_t t = now_ns();
  if (c->count == 0) c->first = t;
  c->last = t;
  c->count++;
  natsMsg_Destroy(msg);
}

static void on_request(natsConnection* nc, natsSubscription* sub, natsMsg* msg, void* closure) {
  (void)sub;
  (void)closure;
  natsConnection_PublishString(nc, natsMsg_GetReply(msg), "ok");
  natsMsg_Destroy(msg);
}

static int cmp(const void* a, const void* b) {
  int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: nats_bench <url> pubsub|request|stream|pull <seconds> <size> [subscribers|window]\n");
    return 2;
  }
  const char* url = argv[1];
  const char* mode = argv[2];
  double seconds = atof(argv[3]);
  int size = atoi(argv[4]);
  int extra = argc > 5 ? atoi(argv[5]) : 1;
  char* body = malloc((size_t)size + 1);
  memset(body, 'x', (size_t)size);
  body[size] = 0;
  int64_t end = now_ns() + (int64_t)(seconds * 1e9);

  if (strcmp(mode, "pubsub") == 0) {
    int n = extra;
    natsConnection** subs = calloc((size_t)n, sizeof *subs);
    Counter* counters = calloc((size_t)n, sizeof *counters);
    for (int i = 0; i < n; ++i) {
      natsSubscription* s = NULL;
      check(natsConnection_ConnectTo(&subs[i], url), "connect");
      check(natsConnection_Subscribe(&s, subs[i], "bench.x", on_msg, &counters[i]), "subscribe");
      natsSubscription_SetPendingLimits(s, -1, -1);
      check(natsConnection_Flush(subs[i]), "flush");
    }
    natsConnection* pub = NULL;
    check(natsConnection_ConnectTo(&pub, url), "connect");
    int64_t sent = 0;
    while (now_ns() < end) {
      for (int k = 0; k < 1000; ++k) natsConnection_Publish(pub, "bench.x", body, size);
      sent += 1000;
    }
    natsConnection_Flush(pub);
    int64_t wait_until = now_ns() + 10000000000LL;
    for (;;) {
      int64_t got = 0;
      for (int i = 0; i < n; ++i) got += counters[i].count;
      if (got >= sent * n || now_ns() > wait_until) break;
      nats_Sleep(10);
    }
    int64_t got = 0, first = INT64_MAX, last = 0;
    for (int i = 0; i < n; ++i) {
      got += counters[i].count;
      if (counters[i].first && counters[i].first < first) first = counters[i].first;
      if (counters[i].last > last) last = counters[i].last;
    }
    printf("%.0f deliveries/s (subscriber clock; %lld of %lld)\n", (double)got / ((double)(last - first) / 1e9),
           (long long)got, (long long)(sent * n));
    return 0;
  }

  // Requests are latency-bound: each message goes out at once (the client otherwise batches in its flusher).
  natsOptions* asap = NULL;
  check(natsOptions_Create(&asap), "options");
  check(natsOptions_SetURL(asap, url), "options");
  check(natsOptions_SetSendAsap(asap, strcmp(mode, "request") == 0), "options");
  natsConnection* nc = NULL;
  check(natsConnection_Connect(&nc, asap), "connect");

  if (strcmp(mode, "request") == 0) {
    natsConnection* rc = NULL;
    natsSubscription* s = NULL;
    check(natsConnection_Connect(&rc, asap), "connect");
    check(natsConnection_Subscribe(&s, rc, "bench.req", on_request, NULL), "subscribe");
    check(natsConnection_Flush(rc), "flush");
    size_t cap = 1 << 22, n = 0;
    int64_t* lat = malloc(cap * sizeof *lat);
    int64_t t0 = now_ns(), last = t0;
    while (now_ns() < end && n < cap) {
      natsMsg* reply = NULL;
      int64_t a = now_ns();
      check(natsConnection_Request(&reply, nc, "bench.req", body, size, 5000), "request");
      last = now_ns();
      lat[n++] = last - a;
      natsMsg_Destroy(reply);
    }
    qsort(lat, n, sizeof *lat, cmp);
    printf("%.0f round trips/s p50 %.1f us p99 %.1f us\n", (double)n / ((double)(last - t0) / 1e9), lat[n / 2] / 1000.0,
           lat[(size_t)((double)n * 0.99)] / 1000.0);
    return 0;
  }

  jsCtx* js = NULL;
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.PublishAsync.MaxPending = extra;
  check(natsConnection_JetStream(&js, nc, &jo), "jetstream");
  jsStreamConfig cfg;
  jsStreamConfig_Init(&cfg);
  char name[64], subject[80];
  snprintf(name, sizeof name, "BENCH%lld", (long long)(now_ns() % 1000000000));
  snprintf(subject, sizeof subject, "bench.%s", name);
  const char* subjects[1] = {subject};
  cfg.Name = name;
  cfg.Subjects = subjects;
  cfg.SubjectsLen = 1;
  cfg.Storage = js_FileStorage;
  jsErrCode jerr = 0;
  js_DeleteStream(js, name, NULL, &jerr);
  check(js_AddStream(NULL, js, &cfg, NULL, &jerr), "add stream");
  int64_t t0 = now_ns(), sent = 0;
  while (now_ns() < end) {
    check(js_PublishAsync(js, subject, body, size, NULL), "publish async");
    ++sent;
  }
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = 60000;
  check(js_PublishAsyncComplete(js, &po), "publish complete");
  int64_t t1 = now_ns();
  if (strcmp(mode, "stream") == 0) {
    printf("%.0f acked publishes/s (%lld)\n", (double)sent / ((double)(t1 - t0) / 1e9), (long long)sent);
    return 0;
  }
  // pull: a durable pull consumer, fetched in batches of 100, each message acked (and the ack confirmed by
  // the server in batches, as `nats bench --pull` does not; acks here are fire-and-forget like its own).
  natsSubscription* sub = NULL;
  jsSubOptions so;
  jsSubOptions_Init(&so);
  so.Stream = name;
  so.Config.AckPolicy = js_AckExplicit;
  so.Config.MaxAckPending = -1;
  check(js_PullSubscribe(&sub, js, subject, "bench", NULL, &so, &jerr), "pull subscribe");
  int64_t got = 0, p0 = now_ns();
  while (got < sent) {
    natsMsgList list;
    natsStatus s = natsSubscription_Fetch(&list, sub, 100, 5000, &jerr);
    if (s == NATS_TIMEOUT) break;
    check(s, "fetch");
    for (int i = 0; i < list.Count; ++i) {
      natsMsg_Ack(list.Msgs[i], NULL);
      ++got;
    }
    natsMsgList_Destroy(&list);
  }
  natsConnection_Flush(nc);
  printf("%.0f pulled and acked/s (%lld of %lld)\n", (double)got / ((double)(now_ns() - p0) / 1e9), (long long)got,
         (long long)sent);
  return 0;
}
