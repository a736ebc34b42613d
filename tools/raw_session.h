// `siomq raw`: an interactive Socket.IO session for debugging a server by hand or driving it from a
// script or a test, through our C++ client (client/). It joins one namespace, prints
//   {"connected":true,"sid":"..."}
// and then reads JSON lines on stdin:
//   {"emit":"E","args":[...],"ack":"TAG","attachments":["<base64>",...]}  sends ["E",args...]; with
//        "ack", asks for one and prints {"ack":"TAG","args":[...],"attachments":[...]} when it comes;
//        args may hold {"_placeholder":true,"num":i} for attachment i (a binary event)
//   {"on":"E"}      prints every event E as {"event":"E","args":[...],"attachments":[...]}
//   {"close":true}  ends the session
// A line it cannot use prints {"error":"..."}. At the end of its input it waits for the acks it asked for
// (10 s at most), then closes. If the server closes the connection first it prints {"closed":"<reason>"}.
// Exit status: 0, or 1 when the connection failed (the reason on stderr), 2 for a bad URL.
#pragma once

#include <string>

namespace siomq::tools {

int raw_session(const std::string& url, const std::string& nsp, const std::string& auth, int eio,
                const std::string& ca_file);

}  // namespace siomq::tools
