#include "surfaces/bus/streams_handlers.h"

#include "broker/streams.h"
#include "surfaces/bus/answer.h"
#include "surfaces/bus/fields.h"
#include "surfaces/bus/stream_answers.h"
#include "surfaces/bus/stream_requests.h"
#include "surfaces/tyo_mq/socket_endpoint.h"
#include "wire/bus_subject.h"
#include "wire/socketio.h"

namespace siomq::surfaces::bus {
namespace {

// Reads the request with `parse`, admits it (auth, role, rate: admit()), then `go(realm, request, answer)`.
// Validation comes first, so a malformed request is 400 whatever it names (§8.19).
template <class Parse, class Go>
void serve(BusContext& ctx, net::Socket& socket, const net::Message& msg, Need need, Parse parse, Go go) {
  Answer answer(endpoint_of(socket), socket.nsp(), msg.ack_id);
  auto req = parse(msg);
  if (!req) return answer.error(req.error());
  auto realm = admit(ctx, *endpoint_of(socket), need, msg.json.size(), answer);
  if (!realm) return;
  if (!ctx.streams) return answer.error(503, "streams are not available on this server");
  go(*realm, std::move(*req), answer);
}

template <class T>
std::function<void(Result<T>)> reply(Answer answer, std::function<std::string(const T&)> shape) {
  return [answer = std::move(answer), shape = std::move(shape)](Result<T> r) {
    if (!r) return answer.error(r.error());
    answer.ok(shape(*r));
  };
}

void acknowledge(BusContext& ctx, net::Socket& socket, const net::Message& msg, broker::Streams::AckKind kind) {
  serve(ctx, socket, msg, Need::subscribe, [](const net::Message& m) { return parse_ack(m.json); },
        [&](const std::string& realm, AckRequest req, const Answer& answer) {
          ctx.streams->acknowledge(realm, std::move(req.consumer), req.seq, kind, req.delay_ms, std::move(req.reason),
                                   reply<Ok>(answer, [](const Ok&) { return std::string(); }));
        });
}

std::string stream_fields(const broker::StreamInfo& info) { return "\"stream\":" + stream_meta_json(info); }

}  // namespace

void on_stream_pub(BusContext& ctx, net::Socket& socket, const net::Message& msg) {
  serve(ctx, socket, msg, Need::publish, [&](const net::Message& m) { return parse_stream_pub(m.json, m.attachments); },
        [&](const std::string& realm, broker::PublishRequest req, const Answer& answer) {
          if (siomq::bus::is_system(req.subject)) return answer.error(403, "subject: $SYS. subjects are the server's");
          ctx.streams->publish(realm, std::move(req), reply<broker::PublishAck>(answer, [](const broker::PublishAck& a) {
            std::string f;
            f.reserve(a.stream.size() + 64);
            f.append("\"stream\":");
            sio::append_json_string(f, a.stream);
            f.append(",\"seq\":");
            f.append(std::to_string(a.seq));
            f.append(a.duplicate ? ",\"duplicate\":true" : ",\"duplicate\":false");
            return f;
          }));
        });
}

void on_consumer_pull(BusContext& ctx, net::Socket& socket, const net::Message& msg) {
  serve(ctx, socket, msg, Need::subscribe, [](const net::Message& m) { return parse_pull(m.json); },
        [&](const std::string& realm, broker::PullRequest req, const Answer& answer) {
          ctx.streams->pull(realm, std::move(req), [answer](Result<std::vector<broker::BusMessagePtr>> r) {
            if (!r) return answer.error(r.error());
            std::vector<Bytes> attachments;
            std::string fields = messages_json(*r, attachments);
            answer.ok(fields, std::move(attachments));
          });
        });
}

void on_consumer_ack(BusContext& ctx, net::Socket& s, const net::Message& m) { acknowledge(ctx, s, m, broker::Streams::AckKind::ack); }
void on_consumer_nak(BusContext& ctx, net::Socket& s, const net::Message& m) { acknowledge(ctx, s, m, broker::Streams::AckKind::nak); }
void on_consumer_term(BusContext& ctx, net::Socket& s, const net::Message& m) { acknowledge(ctx, s, m, broker::Streams::AckKind::term); }
void on_consumer_progress(BusContext& ctx, net::Socket& s, const net::Message& m) {
  acknowledge(ctx, s, m, broker::Streams::AckKind::progress);
}

void on_stream_create(BusContext& ctx, net::Socket& socket, const net::Message& msg) {
  serve(ctx, socket, msg, Need::any, [](const net::Message& m) { return parse_stream_create(m.json); },
        [&](const std::string& realm, broker::StreamConfig config, const Answer& answer) {
          ctx.streams->create(realm, std::move(config), false, reply<broker::StreamInfo>(answer, stream_fields));
        });
}

void on_stream_update(BusContext& ctx, net::Socket& socket, const net::Message& msg) {
  serve(ctx, socket, msg, Need::any, [](const net::Message& m) { return parse_stream_create(m.json); },
        [&](const std::string& realm, broker::StreamConfig config, const Answer& answer) {
          ctx.streams->create(realm, std::move(config), true, reply<broker::StreamInfo>(answer, stream_fields));
        });
}

void on_stream_delete(BusContext& ctx, net::Socket& socket, const net::Message& msg) {
  serve(ctx, socket, msg, Need::any, [](const net::Message& m) { return parse_stream_name(m.json); },
        [&](const std::string& realm, std::string name, const Answer& answer) {
          ctx.streams->remove(realm, std::move(name), reply<Ok>(answer, [](const Ok&) { return std::string(); }));
        });
}

void on_stream_purge(BusContext& ctx, net::Socket& socket, const net::Message& msg) {
  serve(ctx, socket, msg, Need::any, [](const net::Message& m) { return parse_purge(m.json); },
        [&](const std::string& realm, PurgeRequest req, const Answer& answer) {
          ctx.streams->purge(realm, std::move(req.name), std::move(req.subject), req.keep,
                             reply<uint64_t>(answer, [](const uint64_t& n) { return "\"purged\":" + std::to_string(n); }));
        });
}

void on_stream_info(BusContext& ctx, net::Socket& socket, const net::Message& msg) {
  serve(ctx, socket, msg, Need::any, [](const net::Message& m) { return parse_stream_name(m.json); },
        [&](const std::string& realm, std::string name, const Answer& answer) {
          ctx.streams->info(realm, std::move(name), reply<broker::StreamInfo>(answer, [](const broker::StreamInfo& i) {
            std::string consumers = "[";
            for (const auto& c : i.consumers) consumers += (consumers.size() > 1 ? "," : "") + consumer_info_json(c);
            return stream_fields(i) + ",\"state\":" + stream_state_json(i) + ",\"consumers\":" + consumers + "]";
          }));
        });
}

void on_stream_list(BusContext& ctx, net::Socket& socket, const net::Message& msg) {
  serve(ctx, socket, msg, Need::any, [](const net::Message& m) -> Result<Ok> {
    auto object = bus::request_object(m.json);
    if (!object) return object.error();
    return Ok{};
  }, [&](const std::string& realm, Ok, const Answer& answer) {
    ctx.streams->list(realm, reply<std::vector<broker::StreamInfo>>(answer, [](const std::vector<broker::StreamInfo>& all) {
      std::string out = "\"streams\":[";
      for (size_t i = 0; i < all.size(); ++i) out += (i ? "," : "") + stream_meta_json(all[i]);
      return out + "]";
    }));
  });
}

void on_stream_get(BusContext& ctx, net::Socket& socket, const net::Message& msg) {
  serve(ctx, socket, msg, Need::any, [](const net::Message& m) { return parse_get(m.json); },
        [&](const std::string& realm, GetRequest req, const Answer& answer) {
          ctx.streams->get(realm, std::move(req.name), req.seq, std::move(req.last_by_subject),
                           [answer](Result<broker::BusMessagePtr> r) {
                             if (!r) return answer.error(r.error());
                             std::string fields = "\"message\":";
                             append_message(fields, **r, 0);
                             answer.ok(fields, {data_of(*r)});
                           });
        });
}

void on_consumer_add(BusContext& ctx, net::Socket& socket, const net::Message& msg) {
  serve(ctx, socket, msg, Need::any, [](const net::Message& m) { return parse_consumer_add(m.json); },
        [&](const std::string& realm, broker::ConsumerConfig config, const Answer& answer) {
          ctx.streams->add_consumer(realm, std::move(config), reply<broker::ConsumerInfo>(answer, [](const broker::ConsumerInfo& i) {
            return "\"consumer\":" + consumer_info_json(i);
          }));
        });
}

void on_consumer_delete(BusContext& ctx, net::Socket& socket, const net::Message& msg) {
  serve(ctx, socket, msg, Need::any, [](const net::Message& m) { return parse_consumer_ref(m.json); },
        [&](const std::string& realm, ConsumerRef ref, const Answer& answer) {
          ctx.streams->remove_consumer(realm, std::move(ref.stream), std::move(ref.name),
                                       reply<Ok>(answer, [](const Ok&) { return std::string(); }));
        });
}

void on_consumer_info(BusContext& ctx, net::Socket& socket, const net::Message& msg) {
  serve(ctx, socket, msg, Need::any, [](const net::Message& m) { return parse_consumer_ref(m.json); },
        [&](const std::string& realm, ConsumerRef ref, const Answer& answer) {
          ctx.streams->consumer_info(realm, std::move(ref.stream), std::move(ref.name),
                                     reply<broker::ConsumerInfo>(answer, [](const broker::ConsumerInfo& i) {
                                       return "\"consumer\":" + consumer_info_json(i);
                                     }));
        });
}

}  // namespace siomq::surfaces::bus
