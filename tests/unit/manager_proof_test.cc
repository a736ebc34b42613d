// Admin proofs (tyo-mq §8.1) and the canonical JSON they sign, cross-checked against Node.js itself.
#include "auth/manager_proof.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <sstream>

#include "wire/js_json.h"

namespace siomq::auth {
namespace {

constexpr const char* kAction = "AUTH_MANAGEMENT_COMMAND";
constexpr int64_t kNow = 1'764'000'000'000;

std::string proof(double ts, const std::string& nonce, const std::string& signature) {
  return "{\"timestamp\":" + js::number(ts) + ",\"nonce\":\"" + nonce + "\",\"signature\":\"" + signature + "\"}";
}

TEST(CanonicalJson, SortsKeysByUtf16AtEveryDepth) {
  EXPECT_EQ(*js::canonical(R"({"b":1,"a":[{"z":true,"y":null}],"10":2,"2":3})"),
            R"({"10":2,"2":3,"a":[{"y":null,"z":true}],"b":1})");
  // U+FF5E sorts after U+1F600 in UTF-16 (its surrogates start at 0xD83D), before it in UTF-8.
  EXPECT_EQ(*js::canonical("{\"\xef\xbd\x9e\":1,\"\xf0\x9f\x98\x80\":2}"), "{\"\xf0\x9f\x98\x80\":2,\"\xef\xbd\x9e\":1}");
  EXPECT_EQ(*js::canonical(R"({"a":1,"a":2})"), R"({"a":2})");  // JSON.parse keeps the last
  EXPECT_EQ(*js::canonical("[1e21, 1.50, -0, 0.000001, 1e-7]"), "[1e+21,1.5,0,0.000001,1e-7]");
  EXPECT_FALSE(js::canonical("{").ok());
}

TEST(Utf16Order, AsJavaScriptSorts) {
  EXPECT_TRUE(js::utf16_less("a", "b"));
  EXPECT_TRUE(js::utf16_less("a", "ab"));
  EXPECT_FALSE(js::utf16_less("ab", "ab"));
  EXPECT_TRUE(js::utf16_less("\xf0\x9f\x98\x80", "\xee\x80\x80"));   // U+1F600 < U+E000
  EXPECT_TRUE(js::utf16_less("\xf0\x9f\x98\x80", "\xf0\x9f\x98\x81"));  // same high surrogate
  EXPECT_TRUE(js::utf16_less("Z", "a"));
}

TEST(ManagerProof, VerifiesOnceWithinTheWindow) {
  NonceCache nonces;
  const std::string body = R"({"command":"stats","realm":"r1"})";
  auto sig = sign_proof(kAction, kNow, "n1", body, "s3cret");
  ASSERT_TRUE(sig.ok());
  EXPECT_EQ(sig->size(), 64u);
  // The body's layout does not matter, its values do.
  EXPECT_TRUE(verify_proof(kAction, R"({ "realm":"r1", "command":"stats" })", proof(kNow, "n1", *sig), "s3cret",
                           kNow + 1000, nonces)
                  .ok());
  auto again = verify_proof(kAction, body, proof(kNow, "n1", *sig), "s3cret", kNow, nonces);
  EXPECT_EQ(again.error().message, "Manager proof nonce was already used");
  EXPECT_EQ(again.error().code, 401);
  // Forgotten after ten minutes (§0 row 10): by then the timestamp is stale anyway.
  EXPECT_FALSE(nonces.used("n1", kNow + kNonceLifetimeMs + 61'000));
}

TEST(ManagerProof, RefusesWhatDoesNotVerifyWithoutRememberingTheNonce) {
  NonceCache nonces;
  const std::string body = R"({"command":"stats"})";
  auto sig = *sign_proof(kAction, kNow, "n2", body, "k");
  auto check = [&](const std::string& p, std::string_view b = R"({"command":"stats"})", std::string_view action = kAction,
                   int64_t now = kNow) { return verify_proof(action, b, p, "k", now, nonces); };
  EXPECT_EQ(check("").error().message, "Missing manager proof");
  EXPECT_EQ(check("[]").error().message, "Missing manager proof");
  EXPECT_EQ(check(R"({"timestamp":1,"nonce":"x"})").error().message, "Missing manager proof");
  EXPECT_EQ(check(proof(kNow, "n2", sig), R"({"command":"stats","x":1})").error().message, "Invalid manager proof");
  EXPECT_EQ(check(proof(kNow, "n2", sig), R"({"command":"stats"})", "AUTHORIZATION_NEXT").error().message,
            "Invalid manager proof");
  EXPECT_EQ(check(proof(kNow, "n2", sig), body, kAction, kNow + kProofWindowMs + 1).error().message,
            "Invalid manager proof");  // stale
  EXPECT_EQ(check(proof(kNow, "n2", sig), body, kAction, kNow - kProofWindowMs - 1).error().message,
            "Invalid manager proof");  // from the future
  EXPECT_EQ(check(proof(kNow, "n2", sig.substr(2))).error().message, "Invalid manager proof");  // shorter
  EXPECT_EQ(check(proof(kNow, "n2", "zz" + sig.substr(2))).error().message, "Invalid manager proof");  // not hex
  EXPECT_EQ(nonces.size(), 0u);
  // A numeric-string timestamp is Number()ed, as the reference does.
  std::string p = "{\"timestamp\":\"" + std::to_string(kNow) + "\",\"nonce\":\"n2\",\"signature\":\"" + sig + "\"}";
  EXPECT_TRUE(check(p).ok());
  EXPECT_EQ(nonces.size(), 1u);
}

// Issue 12 item 5: a body of many keys canonicalises in linear time (the de-dup scanned every earlier
// key: 100,000 keys took minutes); duplicates still keep the last value at the first position.
TEST(CanonicalJson, ManyKeysInLinearTime) {
  std::string body = "{";
  for (int i = 0; i < 200000; ++i) body += "\"k" + std::to_string(i) + "\":" + std::to_string(i) + ",";
  body += "\"k5\":\"last\"}";
  auto start = std::chrono::steady_clock::now();
  auto c = js::canonical(body);
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(c.ok());
  EXPECT_NE(c->find("\"k5\":\"last\""), std::string::npos);
  EXPECT_EQ(c->find("\"k5\":5"), std::string::npos);
  EXPECT_LT(took, std::chrono::seconds(10)) << "generous: linear work is a few hundred ms even under sanitizers";
  EXPECT_EQ(*js::canonical(R"({"b":1,"a":2,"b":3})"), R"({"a":2,"b":3})");
  EXPECT_EQ(*js::normalize(R"({"b":1,"a":2,"b":3})"), R"({"b":3,"a":2})");
}

// The cheap checks come before canonicalising: a malformed signature, a stale timestamp or a used nonce
// is refused whatever the body; a body over kMaxSignedBody is never canonicalised.
TEST(ManagerProof, CheapChecksFirstAndTheSignedBodyIsCapped) {
  NonceCache nonces;
  auto read = read_proof(proof(kNow, "n", "ab"), kNow, nonces);
  EXPECT_EQ(read.error().message, "Invalid manager proof") << "a signature must be 64 hex digits";
  std::string big = "{\"x\":\"" + std::string(kMaxSignedBody, 'a') + "\"}";
  auto sig = *sign_proof(kAction, kNow, "n3", big, "k");
  EXPECT_EQ(verify_proof(kAction, big, proof(kNow, "n3", sig), "k", kNow, nonces).error().message, "Invalid manager proof");
  EXPECT_EQ(nonces.size(), 0u);
}

// Check and record are one step: of two verifications of one nonce, exactly one records it.
TEST(NonceCache, RecordIsCheckAndSetInOneStep) {
  NonceCache nonces;
  EXPECT_TRUE(nonces.record("n", kNow));
  EXPECT_FALSE(nonces.record("n", kNow + 1));
  EXPECT_TRUE(nonces.used("n", kNow + 2));
  EXPECT_TRUE(nonces.record("n", kNow + kNonceLifetimeMs + 1)) << "usable again once forgotten";
}

// Node.js computes stableStringify (as §8.1 writes it) and the HMAC over random bodies; we must agree.
TEST(ManagerProof, AgreesWithNodeOnAGeneratedCorpus) {
  const char* script = R"JS(
const crypto = require('crypto');
let seed = 12345;
const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
const chars = ['a', 'B', 'z', '0', '9', '_', ' ', '"', '\\', '\n', '\u0001', '\u00e9', '\u4e2d', '\uff5e', '\ud83d\ude00', '\ue000', '<', '&'];
const str = () => { let s = ''; for (let i = rnd(6); i > 0; i--) s += chars[rnd(chars.length)]; return s; };
const nums = [0, -0, 1, -1, 1.5, 0.1, 1e21, 1e-7, 123456789012345680000, 2 ** 53, -(2 ** 60), 3.14159, 1 / 3, 5e-324, 1.7976931348623157e308];
const value = (d) => {
  const k = rnd(d > 3 ? 4 : 7);
  if (k === 0) return null;
  if (k === 1) return rnd(2) === 0;
  if (k === 2) return rnd(3) === 0 ? nums[rnd(nums.length)] : rnd(100000) / (1 + rnd(1000));
  if (k === 3) return str();
  if (k === 4) { const a = []; for (let i = rnd(4); i > 0; i--) a.push(value(d + 1)); return a; }
  const o = {}; for (let i = rnd(5); i > 0; i--) o[rnd(4) === 0 ? String(rnd(20)) : str()] = value(d + 1); return o;
};
const stable = (v) => {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return '[' + v.map((x) => x === undefined ? 'null' : stable(x)).join(',') + ']';
  return '{' + Object.keys(v).sort().filter((k) => v[k] !== undefined).map((k) => JSON.stringify(k) + ':' + stable(v[k])).join(',') + '}';
};
for (let i = 0; i < 400; i++) {
  const body = { command: 'c' + i, args: value(0) };
  const ts = 1764000000000 + i, nonce = crypto.randomBytes(16).toString('hex');
  const base = 'AUTH_MANAGEMENT_COMMAND\n' + String(ts) + '\n' + nonce + '\n' + stable(body);
  const sig = crypto.createHmac('sha256', 'secret-' + i).update(base).digest('hex');
  console.log(JSON.stringify([JSON.stringify(body), stable(body), ts, nonce, sig]));
}
)JS";
  std::string command = "node -e '";
  for (char c : std::string(script)) {
    if (c == '\'') command += "'\\''";
    else command += c;
  }
  command += "'";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  ASSERT_TRUE(pipe) << "cannot run node";
  std::string output;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof buf, pipe.get())) output.append(buf, n);
  std::istringstream lines(output);
  std::string line;
  int checked = 0;
  NonceCache nonces;
  simdjson::dom::parser parser;
  while (std::getline(lines, line)) {
    auto row = parser.parse(line).get_array();
    ASSERT_FALSE(row.error()) << line;
    std::vector<simdjson::dom::element> f(row.value().begin(), row.value().end());
    ASSERT_EQ(f.size(), 5u);
    std::string body(f[0].get_string().value()), stable(f[1].get_string().value());
    std::string nonce(f[3].get_string().value()), sig(f[4].get_string().value());
    int64_t ts = f[2].get_int64().value();
    EXPECT_EQ(*js::canonical(body), stable) << body;
    std::string secret = "secret-" + std::to_string(checked);
    EXPECT_EQ(*sign_proof(kAction, static_cast<double>(ts), nonce, body, secret), sig) << body;
    EXPECT_TRUE(verify_proof(kAction, body, proof(static_cast<double>(ts), nonce, sig), secret, ts, nonces).ok()) << body;
    ++checked;
  }
  EXPECT_EQ(checked, 400) << "node printed: " << output.substr(0, 500);
}

}  // namespace
}  // namespace siomq::auth
