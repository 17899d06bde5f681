// The opaque C handle behind djava_tm_client*.
#ifndef DJAVA_TM_CLIENT_TM_CAPI_INTERNAL_H_
#define DJAVA_TM_CLIENT_TM_CAPI_INTERNAL_H_

#include <memory>

#include "tm_client.h"

struct djava_tm_client {
  std::unique_ptr<djava::tm::TmClient> impl;
};

#endif  // DJAVA_TM_CLIENT_TM_CAPI_INTERNAL_H_
