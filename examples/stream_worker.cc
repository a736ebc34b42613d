// A stream worker: create the JOBS stream and a pull consumer, publish jobs (each answered once it is
// stored), then pull them in batches and acknowledge each one; a failed job is nak'ed for a retry.
#include <siomq/bus.h>

#include <cstdio>

int main(int argc, char** argv) {
  siomq::bus::DialOptions options;
  if (argc > 1) options.urls = {argv[1]};
  auto dialed = siomq::bus::Conn::dial(options);
  if (!dialed) {
    std::fprintf(stderr, "dial: %s\n", dialed.error().message.c_str());
    return 1;
  }
  siomq::bus::Conn& bus = **dialed;

  siomq::bus::StreamConfig jobs;
  jobs.name = "JOBS";
  jobs.subjects = {"jobs.>"};
  jobs.retention = "workqueue";
  if (auto st = bus.create_stream(jobs).get(); !st) {
    std::fprintf(stderr, "stream: %s\n", st.error().message.c_str());
    return 1;
  }
  siomq::bus::ConsumerConfig worker;
  worker.stream = "JOBS";
  worker.name = "resizer";
  worker.ack_wait_ms = 30000;
  worker.max_deliver = 5;
  if (!bus.add_consumer(worker).get()) return 1;

  for (int n = 1; n <= 5; ++n) {
    siomq::bus::PublishOptions once;
    once.msg_id = "job-" + std::to_string(n);  // published twice by mistake? stored once
    auto ack = bus.stream_publish("jobs.resize", "image-" + std::to_string(n) + ".png", once).get();
    if (!ack) return 1;
    std::printf("job %d stored as seq %llu\n", n, static_cast<unsigned long long>(ack->seq));
  }

  int done = 0;
  bool retried = false;
  while (done < 5) {
    auto batch = bus.pull("resizer", 2, std::chrono::milliseconds(1000)).get();
    if (!batch || batch->empty()) return 1;
    for (const auto& job : *batch) {
      if (job.seq == 3 && !retried) {  // pretend this one failed the first time
        retried = true;
        (void)bus.nak("resizer", job.seq).get();
        continue;
      }
      std::printf("resized %s (delivery %llu)\n", job.data.c_str(), static_cast<unsigned long long>(job.delivered));
      if (!bus.ack("resizer", job.seq).get()) return 1;
      ++done;
    }
  }
  (void)bus.delete_stream("JOBS").get();
  return 0;
}
