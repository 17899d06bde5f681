// The C ABI of include/djava/sos_client.h over Client. The cached paths of
// load, lock and release are here, inline, so a hit costs one
// compare-and-swap and a release one atomic decrement.
#include <cstdio>

#include "client.h"

using djava::sos::Client;
using djava::sos::kBlocked;
using djava::sos::kPin;
using djava::sos::kPinShift;
using djava::sos::kStateM;
using djava::sos::kStateMask;
using djava::sos::kStateS;

namespace {

// Callers may pass no error struct; the slow paths always write one.
struct ErrorSlot {
  djava_sos_error local;
  djava_sos_error* get(djava_sos_error* e) { return e != nullptr ? e : &local; }
};

}  // namespace

extern "C" {

const char* djava_sos_status_name(djava_sos_status status) {
  switch (status) {
    case DJAVA_SOS_OK: return "OK";
    case DJAVA_SOS_LOST: return "LOST";
    case DJAVA_SOS_NO_SUCH_CHUNK: return "NO_SUCH_CHUNK";
    case DJAVA_SOS_FREED: return "FREED";
    case DJAVA_SOS_IN_USE: return "IN_USE";
    case DJAVA_SOS_TOO_LARGE: return "TOO_LARGE";
    case DJAVA_SOS_BAD_ARGUMENT: return "BAD_ARGUMENT";
    case DJAVA_SOS_DISCONNECTED: return "DISCONNECTED";
    case DJAVA_SOS_INSTALL_FAILED: return "INSTALL_FAILED";
    case DJAVA_SOS_PROTOCOL: return "PROTOCOL";
  }
  return "UNKNOWN";
}

djava_sos_status djava_sos_connect(const djava_sos_config* config, djava_sos_client** out,
                                   djava_sos_error* error) {
  ErrorSlot slot;
  if (config == nullptr || out == nullptr) {
    djava_sos_error* e = slot.get(error);
    e->status = DJAVA_SOS_BAD_ARGUMENT;
    std::snprintf(e->message, sizeof e->message, "config and out are required");
    return DJAVA_SOS_BAD_ARGUMENT;
  }
  Client* c = nullptr;
  djava_sos_status s = Client::Connect(*config, &c, slot.get(error));
  *out = reinterpret_cast<djava_sos_client*>(c);
  return s;
}

djava_sos_status djava_sos_close(djava_sos_client* client, djava_sos_error* error) {
  ErrorSlot slot;
  Client* c = reinterpret_cast<Client*>(client);
  djava_sos_status s = c->Close(slot.get(error));
  delete c;
  return s;
}

djava_sos_status djava_sos_leave(djava_sos_client* client, djava_sos_error* error) {
  ErrorSlot slot;
  return reinterpret_cast<Client*>(client)->Close(slot.get(error));
}

void djava_sos_abandon(djava_sos_client* client) {
  Client* c = reinterpret_cast<Client*>(client);
  c->Abandon();
  delete c;
}

uint32_t djava_sos_node(const djava_sos_client* client) {
  return reinterpret_cast<const Client*>(client)->node();
}

int djava_sos_lost(const djava_sos_client* client, char* why, size_t length) {
  std::string reason;
  if (!reinterpret_cast<const Client*>(client)->Lost(&reason)) return 0;
  if (why != nullptr && length > 0) std::snprintf(why, length, "%s", reason.c_str());
  return 1;
}

djava_sos_chunk* djava_sos_alloc(djava_sos_client* client, size_t size, const djava_sos_meta* meta,
                                 djava_sos_error* error) {
  ErrorSlot slot;
  return reinterpret_cast<Client*>(client)->Alloc(size, meta, slot.get(error));
}

djava_sos_chunk* djava_sos_alloc_run(djava_sos_client* client, size_t count, const size_t* sizes,
                                     const djava_sos_meta* meta, djava_sos_error* error) {
  ErrorSlot slot;
  return reinterpret_cast<Client*>(client)->AllocRun(count, sizes, meta, slot.get(error));
}

djava_sos_chunk* djava_sos_chunk_for(djava_sos_client* client, uint64_t id) {
  return reinterpret_cast<Client*>(client)->ChunkFor(id);
}

uint64_t djava_sos_id(const djava_sos_chunk* chunk) { return chunk->id; }

void djava_sos_set_user(djava_sos_chunk* chunk, uintptr_t value) { chunk->user.store(value); }
uintptr_t djava_sos_user(const djava_sos_chunk* chunk) { return chunk->user.load(); }

djava_sos_status djava_sos_load(djava_sos_chunk* chunk, djava_sos_error* error) {
  uint64_t w = chunk->word.load(std::memory_order_relaxed);
  if ((w & kStateMask) != 0 && !(w & kBlocked) &&
      chunk->word.compare_exchange_weak(w, w + kPin, std::memory_order_acquire,
                                        std::memory_order_relaxed))
    return DJAVA_SOS_OK;
  ErrorSlot slot;
  return chunk->client->Access(chunk, false, slot.get(error));
}

int djava_sos_try_load(djava_sos_chunk* chunk) {
  uint64_t w = chunk->word.load(std::memory_order_relaxed);
  return (w & kStateMask) != 0 && !(w & kBlocked) &&
         chunk->word.compare_exchange_weak(w, w + kPin, std::memory_order_acquire,
                                           std::memory_order_relaxed);
}

int djava_sos_try_lock(djava_sos_chunk* chunk) {
  uint64_t w = chunk->word.load(std::memory_order_relaxed);
  return (w & (kStateMask | kBlocked)) == kStateM &&
         chunk->word.compare_exchange_weak(w, w + kPin, std::memory_order_acquire,
                                           std::memory_order_relaxed);
}

djava_sos_status djava_sos_lock(djava_sos_chunk* chunk, djava_sos_error* error) {
  uint64_t w = chunk->word.load(std::memory_order_relaxed);
  if ((w & (kStateMask | kBlocked)) == kStateM &&
      chunk->word.compare_exchange_weak(w, w + kPin, std::memory_order_acquire,
                                        std::memory_order_relaxed))
    return DJAVA_SOS_OK;
  ErrorSlot slot;
  return chunk->client->Access(chunk, true, slot.get(error));
}

void djava_sos_release(djava_sos_chunk* chunk) {
  const uint64_t old = chunk->word.fetch_sub(kPin, std::memory_order_acq_rel);
  if ((old & kBlocked) && (old >> kPinShift) == 1) chunk->client->SlowRelease(chunk);
}

volatile uint64_t* djava_sos_word(djava_sos_chunk* chunk) {
  // The inline protocol in the header is these functions' own, spelled out.
  static_assert(sizeof(std::atomic<uint64_t>) == sizeof(uint64_t) &&
                    std::atomic<uint64_t>::is_always_lock_free,
                "the state word must be a plain lock-free 64-bit word");
  static_assert(kStateMask == DJAVA_SOS_WORD_STATE_MASK && kStateM == DJAVA_SOS_WORD_STATE_M &&
                    kStateS == DJAVA_SOS_WORD_STATE_S && kBlocked == DJAVA_SOS_WORD_BLOCKED &&
                    kPinShift == DJAVA_SOS_WORD_PIN_SHIFT,
                "the header's word layout is the client's");
  return reinterpret_cast<volatile uint64_t*>(&chunk->word);
}

void djava_sos_release_last(djava_sos_chunk* chunk) { chunk->client->SlowRelease(chunk); }

void* djava_sos_data(djava_sos_chunk* chunk) { return chunk->bytes.get(); }

size_t djava_sos_size(const djava_sos_chunk* chunk) { return chunk->size; }

const djava_sos_meta* djava_sos_meta_of(const djava_sos_chunk* chunk) {
  return chunk->has_meta ? &chunk->meta : nullptr;
}

djava_sos_status djava_sos_prefetch(djava_sos_client* client, const uint64_t* ids, size_t n,
                                    djava_sos_error* error) {
  ErrorSlot slot;
  return reinterpret_cast<Client*>(client)->Prefetch(ids, n, false, false, 0, slot.get(error));
}

djava_sos_status djava_sos_prefetch_exclusive(djava_sos_client* client, const uint64_t* ids,
                                              size_t n, djava_sos_error* error) {
  ErrorSlot slot;
  return reinterpret_cast<Client*>(client)->Prefetch(ids, n, true, false, 0, slot.get(error));
}

djava_sos_status djava_sos_prefetch_window(djava_sos_client* client, const uint64_t* ids, size_t n,
                                           int exclusive, size_t at_least,
                                           djava_sos_error* error) {
  ErrorSlot slot;
  return reinterpret_cast<Client*>(client)->Prefetch(ids, n, exclusive != 0, false, at_least,
                                                     slot.get(error));
}

djava_sos_status djava_sos_prefetch_first_writes(djava_sos_client* client, const uint64_t* ids,
                                                 size_t n, djava_sos_error* error) {
  ErrorSlot slot;
  return reinterpret_cast<Client*>(client)->Prefetch(ids, n, true, true, 0, slot.get(error));
}

djava_sos_status djava_sos_free(djava_sos_chunk* chunk, djava_sos_error* error) {
  ErrorSlot slot;
  return chunk->client->Free(chunk, slot.get(error));
}

void djava_sos_discard(djava_sos_chunk* chunk) { chunk->client->Discard(chunk); }

djava_sos_status djava_sos_drop_copy(djava_sos_chunk* chunk, uintptr_t orphan_user) {
  return chunk->client->DropCopy(chunk, orphan_user);
}

void djava_sos_unreferenced(djava_sos_chunk* chunk) { chunk->client->Unreferenced(chunk); }

void djava_sos_retain(djava_sos_chunk* chunk) { chunk->retained.fetch_add(1); }

djava_sos_status djava_sos_write_back(djava_sos_chunk* chunk) {
  return chunk->client->WriteBack(chunk);
}

void djava_sos_unretain(djava_sos_chunk* chunk) { chunk->client->Unretain(chunk); }

uint64_t djava_sos_exclusive_mark(djava_sos_client* client) {
  return reinterpret_cast<Client*>(client)->ExclusiveMark();
}

size_t djava_sos_hand_over(djava_sos_client* client, uint64_t since, uint64_t program,
                           uint32_t flags, uint64_t* out, size_t max) {
  return reinterpret_cast<Client*>(client)->HandOver(
      since, program, (flags & DJAVA_SOS_HAND_OVER_JDK_ONLY) != 0, out, max);
}

void djava_sos_take_chunk_stats(djava_sos_chunk* chunk, djava_sos_stats* stats) {
  chunk->client->TakeChunkStats(chunk, stats);
}

void djava_sos_produced_refs(djava_sos_chunk* chunk, const uint64_t* ids, size_t n,
                             const uint64_t* run_heads, const uint32_t* run_blocks, size_t n_runs) {
  chunk->client->ProducedRefs(chunk, ids, n, run_heads, run_blocks, n_runs);
}

size_t djava_sos_forget_program(djava_sos_client* client, uint64_t program,
                                djava_sos_chunk* const* kept, size_t n_kept,
                                djava_sos_chunk* const* released, size_t n_released) {
  return reinterpret_cast<Client*>(client)->ForgetProgram(program, kept, n_kept, released,
                                                          n_released);
}

void djava_sos_hold_handles(djava_sos_client* client) {
  reinterpret_cast<Client*>(client)->HoldHandles();
}

void djava_sos_unhold_handles(djava_sos_client* client) {
  reinterpret_cast<Client*>(client)->UnholdHandles();
}

size_t djava_sos_handle_count(djava_sos_client* client) {
  return reinterpret_cast<Client*>(client)->HandleCount();
}

void djava_sos_retry_deferred(djava_sos_client* client) {
  reinterpret_cast<Client*>(client)->RetryDeferredNow();
}

void djava_sos_get_stats(const djava_sos_client* client, djava_sos_stats* stats) {
  reinterpret_cast<const Client*>(client)->GetStats(stats);
}

size_t djava_sos_traffic(const djava_sos_client* client, char* out, size_t max) {
  return djava::wire::CopyTextOut(reinterpret_cast<const Client*>(client)->TrafficByKind(), out,
                                  max);
}

void djava_sos_chunk_stats(djava_sos_chunk* chunk, djava_sos_stats* stats) {
  std::lock_guard<std::mutex> l(chunk->mu);
  *stats = chunk->stats;
}

}  // extern "C"
