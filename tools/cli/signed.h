// Running a signed manager command (tyo-mq §8): the secret (--manager-key, else the admin token), an
// unauthenticated connection (the proof is the credential), the call through siomq::tyomq::Manager, and
// its answer printed — the server's answer object with --json, `done` otherwise.
#pragma once

#include <functional>
#include <future>
#include <string>

#include "siomq/tyomq_manage.h"
#include "tools/cli/context.h"

namespace siomq::cli {

class Output;

using ManagerCall = std::function<std::future<Result<std::string>>(tyomq::Manager&)>;
// Prints a successful answer (the parsed answer object) for humans.
using HumanPrint = std::function<void(const Output&, const std::string& answer_json)>;

// Exit code 2 when there is no secret; otherwise the call's.
int run_signed(const char* what, const std::string& manager_key, const Context& ctx, const Output& out, ManagerCall call,
               HumanPrint human);

// The secret and the connection alone, for calls that print on their own (DLQ entries, enrolment):
// `call` returns the exit code.
using SignedAction = std::function<int(tyomq::Client& client, const std::string& secret)>;
int with_signer(const char* what, const std::string& manager_key, const Context& ctx, const Output& out,
                const SignedAction& call);

// A human line for a simple command: "<text>".
HumanPrint says(std::string text);

}  // namespace siomq::cli
