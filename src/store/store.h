// The store as the engine sees it: the backends and every record family they hold (backend.h). The
// group-commit writer is writer.h. Include a narrower header where one is enough.
#pragma once

#include "store/backend.h"
