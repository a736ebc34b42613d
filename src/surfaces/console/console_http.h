// The web console's pages over HTTP, on the console's own port: GET and HEAD of /console/<file> from the
// embedded files (console_assets.h), / and /console sent on to /console/. Every answer carries the
// console's security headers: a Content-Security-Policy that allows scripts, styles and connections from
// the console's own origin only (no inline script, no eval, no framing), nosniff, no referrer. The pages
// hold no data: what they show comes over the /console namespace once a visitor has signed in
// (console_namespace.h), so serving them needs no credentials.
//
// Threading: the route runs on the connection's worker; it reads only static data.
#pragma once

#include <memory>

#include "net/http_connection.h"

namespace siomq::surfaces::console {

// Answers the request when its path is the console's (true), else leaves it to the next route (false).
bool serve_console_page(const std::shared_ptr<net::HttpConnection>& conn, net::HttpRequest& request);

// Answers 403 (true) a request that a page of another origin made: its Origin header is present and is
// not the console's own (scheme://Host). The console's Engine.IO sessions go through this first, so that
// another site open in an operator's browser cannot read the console (with auth off, when no credential
// would stop it) nor use the broker through its port. Clients that are not browsers send no Origin.
bool refuse_cross_origin(const std::shared_ptr<net::HttpConnection>& conn, const net::HttpRequest& request);

}  // namespace siomq::surfaces::console
