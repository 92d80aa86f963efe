//===- EventPool.cpp - Timing events, made once and reused ------*- C++ -*-===//
#include "EventPool.h"

namespace loom::rt::cuda {

EventPool::~EventPool() {
  for (CUevent event : spare)
    drv.cuEventDestroy(event);
}

CUevent EventPool::record(CUstream stream) {
  CUevent event = nullptr;
  if (!spare.empty()) {
    event = spare.back();
    spare.pop_back();
  } else if (drv.cuEventCreate(&event, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
    return nullptr;
  }
  if (drv.cuEventRecord(event, stream) != CUDA_SUCCESS) {
    spare.push_back(event);
    return nullptr;
  }
  return event;
}

void EventPool::give(CUevent event) {
  if (event)
    spare.push_back(event);
}

} // namespace loom::rt::cuda
