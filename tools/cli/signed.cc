// Signed manager commands (tools/cli/signed.h).
#include "tools/cli/signed.h"

#include "tools/cli/connect.h"
#include "tools/cli/output.h"

namespace siomq::cli {

int with_signer(const char* what, const std::string& manager_key, const Context& ctx, const Output& out,
                const SignedAction& call) {
  std::string secret = signing_secret(ctx, manager_key);
  if (secret.empty())
    return out.usage(std::string(what) + " is signed: give --admin-token (or TYO_MQ_ADMIN_TOKEN) or --manager-key");
  auto client = connect_tyomq(ctx, false);
  if (!client) return out.fail(what, client.error());
  return call(**client, secret);
}

int run_signed(const char* what, const std::string& manager_key, const Context& ctx, const Output& out, ManagerCall call,
               HumanPrint human) {
  return with_signer(what, manager_key, ctx, out, [&](tyomq::Client& client, const std::string& secret) {
    tyomq::Manager manager(client, secret);
    auto r = call(manager).get();
    if (!r) return out.fail(what, r.error());
    if (out.json()) out.print_json(json_or_string(*r));
    else human(out, *r);
    return static_cast<int>(kExitOk);
  });
}

HumanPrint says(std::string text) {
  return [text = std::move(text)](const Output& out, const std::string&) { out.line(text); };
}

}  // namespace siomq::cli
