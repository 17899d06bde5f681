// The opaque C handle behind djava_monitor_client*.
#ifndef DJAVA_MONITOR_MONITOR_CAPI_INTERNAL_H_
#define DJAVA_MONITOR_MONITOR_CAPI_INTERNAL_H_

#include <memory>

#include "monitor_client.h"

struct djava_monitor_client {
  std::unique_ptr<djava::monitor::MonitorClient> impl;
};

#endif  // DJAVA_MONITOR_MONITOR_CAPI_INTERNAL_H_
