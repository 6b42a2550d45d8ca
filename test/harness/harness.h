// The integration-test harness in one include: env.h (free ports, runfiles, temp files and
// configs), process.h (child processes, the echo backend), http_client.h (raw HTTP/1.1 client).
#pragma once

#include "test/harness/env.h"
#include "test/harness/http_client.h"
#include "test/harness/process.h"
