// The tyo-mq event bodies for siomq::tyomq::Client (internal): typed requests written as JSON, answers
// and deliveries read into the public structs, and the text rules of chunking. Pure functions; the
// parser is the calling thread's own.
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>
#include <vector>

#include "siomq/connection.h"
#include "siomq/tyomq.h"

namespace siomq::tyomq::wire {

// ASCII lowercase, as subscription keys are written.
std::string lower(std::string_view s);
// Length in UTF-16 code units, as the JavaScript clients and servers measure a message.
size_t utf16_length(std::string_view s);
// Pieces of at most `max` bytes, cut at UTF-8 character boundaries (each piece is a JSON string).
std::vector<std::string_view> utf8_pieces(std::string_view s, size_t max);

std::string subscribe_json(const SubscribeRequest& r);
std::string produce_json(const ProduceRequest& r);

ConsumedMessage delivery_of(simdjson::dom::element e, std::vector<std::string> attachments);
// ERROR (an object or a bare string), AUTH_FAIL, RATE_LIMITED, ACK_FAIL, …
ServerError error_of(std::string event, const Reply& r);
PendingAuthRequest pending_of(simdjson::dom::element e);
// A tyo-mq answer through an ack: {ok:false, code, message} is an Error, anything else the value.
Result<simdjson::dom::element> answer(const Result<Reply>& r);

}  // namespace siomq::tyomq::wire
