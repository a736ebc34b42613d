// POST /pub/:realm/:event and /pub/:realm?event= (tyo-mq §9): see http_publish.h. Declared in
// publish_state.h (serve_publish).
#pragma once
#include "surfaces/http/publish_state.h"
