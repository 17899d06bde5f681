/*
 * sos-client: a node's (JVM process's) cache of the shared-object system.
 *
 * The C ABI HotSpot calls. Nothing C++ crosses it: no exceptions, no RTTI,
 * errors are return codes plus a message. One client per process; every
 * function is safe from any number of threads.
 *
 * A chunk is named by a 64-bit id and reached through a handle
 * (djava_sos_chunk*) that stays valid until the client is closed, so the
 * JVM looks an id up once and keeps the handle. Each handle is in state
 * I (no copy), S (read copy) or M (the only copy, possibly dirty).
 *
 * An access brackets one read or write of the chunk's bytes:
 *     if (djava_sos_load(c, &err) == DJAVA_SOS_OK) { ...read...; djava_sos_release(c); }
 * Between load/lock and release the bytes are current and the server's
 * invalidate or flush waits: a field write is never torn. lock gives this
 * node the only copy; it does not exclude the node's other threads, which
 * (as in Java) synchronize among themselves. A cached
 * load+release is two atomic instructions; a miss asks the server and
 * waits, holding no lock another thread needs.
 *
 * Where the bytes live. By default the client keeps each chunk's bytes
 * (djava_sos_data). A JVM that keeps them inside its own Java object passes
 * callbacks instead: install() puts fetched bytes into the object and
 * produce() copies them out for a flush. See docs/DESIGN.md.
 */
#ifndef DJAVA_SOS_CLIENT_H_
#define DJAVA_SOS_CLIENT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct djava_sos_client djava_sos_client;
typedef struct djava_sos_chunk djava_sos_chunk;

typedef enum {
  DJAVA_SOS_OK = 0,
  DJAVA_SOS_LOST = 1,          /* the only current copy died with its node */
  DJAVA_SOS_NO_SUCH_CHUNK = 2, /* no node ever created this id */
  DJAVA_SOS_FREED = 3,         /* the chunk was freed */
  DJAVA_SOS_IN_USE = 4,        /* free refused: other nodes hold copies */
  DJAVA_SOS_TOO_LARGE = 5,
  DJAVA_SOS_BAD_ARGUMENT = 6,
  DJAVA_SOS_DISCONNECTED = 7,  /* the server connection is gone */
  DJAVA_SOS_INSTALL_FAILED = 8,/* the install callback refused the bytes */
  DJAVA_SOS_PROTOCOL = 9       /* the server broke the protocol */
} djava_sos_status;

typedef struct {
  djava_sos_status status;
  char message[256];           /* says which chunk and why */
} djava_sos_error;

/* The status's enumerator name without the prefix ("LOST"), for messages. */
const char* djava_sos_status_name(djava_sos_status status);

/* What the JVM needs to rebuild the object elsewhere. */
typedef struct {
  const char* class_name;      /* JVM binary name; NUL-terminated */
  uint64_t program;            /* the program the class belongs to */
  int32_t element_type;        /* arrays: BasicType of the elements; 0 otherwise */
  uint32_t array_length;
  uint32_t identity_hash;
} djava_sos_meta;

#define DJAVA_SOS_PRODUCE_LATER ((size_t)-1)

typedef struct {
  void* context;
  /* After a fetch, on the thread whose access needs the chunk, before that
   * access: put `size` bytes (and meta, the first time) into the JVM's
   * object. Nonzero refuses the bytes: the access fails with
   * DJAVA_SOS_INSTALL_FAILED and `error`'s text. */
  int (*install)(void* context, djava_sos_chunk* chunk, uint64_t id, const djava_sos_meta* meta,
                 const void* bytes, size_t size, char* error, size_t error_capacity);
  /* For a flush: copy the chunk's current bytes into buffer and return
   * their size. A chunk's size may change while this node holds it in M (a
   * JVM's encoding of an object can grow); when the size is above
   * `capacity`, write nothing and return the size: the client calls again
   * with a buffer that large. Runs when no access to the chunk is in
   * progress, on the client's service thread or on the thread whose release
   * ended the last access.
   * DJAVA_SOS_PRODUCE_LATER says the bytes cannot be produced yet (a JVM
   * cannot make an object they reference shared while another thread holds
   * it locked): the client keeps the chunk as it is, lets accesses go on,
   * and asks again later on its own thread, backing off, until produce
   * gives the bytes. The server's answer timeout bounds the wait. */
  size_t (*produce)(void* context, djava_sos_chunk* chunk, uint64_t id, void* buffer,
                    size_t capacity);
  /* The client's own threads call these when they start and end, so a JVM
   * can attach them before they call produce(). May be null. */
  void (*thread_started)(void* context, const char* name);
  void (*thread_ending)(void* context);
  /* For a JVM whose inline writers announce themselves instead of pinning
   * (see djava_sos_word): the revoker of a chunk in state M calls it after
   * it set BLOCKED and before it reads the bytes or changes the state; it
   * returns once no writer that saw the word in M before then is still
   * storing. Runs on the client's service thread, holding the chunk's own
   * lock (which no announced writer takes). May be null. */
  void (*quiesce_writers)(void* context, volatile uint64_t* word);
} djava_sos_callbacks;

typedef struct {
  /* "host:port" of the sos-server, or "host:port,host:port,..." of the
   * shards the directory is split over, in the cluster's order (every node
   * lists them alike; each server checks its place) */
  const char* server;
  const char* secret_file;     /* cluster secret, mode 0600 */
  const char* node_name;       /* for logs and other nodes' errors; may be null */
  const djava_sos_callbacks* callbacks; /* null: the client keeps the bytes */
} djava_sos_config;

/* Connects both connections and authenticates. DJAVA_SOS_OK with *out set. */
djava_sos_status djava_sos_connect(const djava_sos_config* config, djava_sos_client** out,
                                   djava_sos_error* error);
/* Leaves the cluster cleanly: writes every modified chunk back (die /
 * okToDie), then disconnects and frees the client. Handles die with it. */
djava_sos_status djava_sos_close(djava_sos_client* client, djava_sos_error* error);
/* Leaves as djava_sos_close does but keeps the client and its handles
 * allocated: every later access fails with DJAVA_SOS_DISCONNECTED instead of
 * touching freed memory. For a process that leaves while other threads may
 * still hold handles (a JVM between leaving and halting); free the client
 * with djava_sos_abandon, or never. */
djava_sos_status djava_sos_leave(djava_sos_client* client, djava_sos_error* error);
/* Disconnects without writing back (a crash, as the server sees it). */
void djava_sos_abandon(djava_sos_client* client);

uint32_t djava_sos_node(const djava_sos_client* client);
/* 1 when the client lost a sos-server (or left): every access fails from
 * then on; `why` (of `length` bytes, NUL-terminated) says which server and
 * how. 0 while the client is connected to every shard. */
int djava_sos_lost(const djava_sos_client* client, char* why, size_t length);

/* A new chunk of `size` zeroed bytes, in state M, with no server round trip.
 * meta->class_name is copied. Null with *error on failure. */
djava_sos_chunk* djava_sos_alloc(djava_sos_client* client, size_t size, const djava_sos_meta* meta,
                                 djava_sos_error* error);
/* count new chunks as djava_sos_alloc makes them, with consecutive ids (a
 * large array's header and its blocks, docs/SOS.md): chunk i has sizes[i]
 * bytes and the id of the first plus i; all have meta. Returns the first;
 * djava_sos_chunk_for finds the others. Null with *error on failure. */
djava_sos_chunk* djava_sos_alloc_run(djava_sos_client* client, size_t count, const size_t* sizes,
                                     const djava_sos_meta* meta, djava_sos_error* error);
/* The handle of an id learned from elsewhere (state I until first access);
 * the same handle every time. Null for id 0. */
djava_sos_chunk* djava_sos_chunk_for(djava_sos_client* client, uint64_t id);
uint64_t djava_sos_id(const djava_sos_chunk* chunk);

/* The JVM's own word per handle (e.g. its replica-table index). */
void djava_sos_set_user(djava_sos_chunk* chunk, uintptr_t value);
uintptr_t djava_sos_user(const djava_sos_chunk* chunk);

/* Begin a read (load) or write (lock) access. */
djava_sos_status djava_sos_load(djava_sos_chunk* chunk, djava_sos_error* error);
djava_sos_status djava_sos_lock(djava_sos_chunk* chunk, djava_sos_error* error);
/* The same when this node already holds the copy, never blocking and never
 * calling back: 1 with the access begun, 0 when it would need the server
 * (then call load or lock). For a caller that may not block here (the
 * JVM's interpreter, in Java state). A spurious 0 is allowed. */
int djava_sos_try_load(djava_sos_chunk* chunk);
int djava_sos_try_lock(djava_sos_chunk* chunk);
/* End the access begun by load or lock. */
void djava_sos_release(djava_sos_chunk* chunk);

/* The chunk's state word, for a caller that tests and pins it inline (the
 * JVM's interpreter: a cached access then costs no call). The word lives as
 * long as the client; only these operations on it are allowed:
 *  - a read that needs no pin (its bytes change only under a later access):
 *    an acquire load; the copy is readable when the state bits are S or M
 *    and BLOCKED is clear;
 *  - try_lock: an acquire compare-and-swap from a word with state M and
 *    BLOCKED clear to that word + PIN;
 *  - release: an acq_rel fetch-and-sub of PIN; if the old word had BLOCKED
 *    and exactly one pin, call djava_sos_release_last(chunk);
 *  - an announced write, with a quiesce_writers callback: the writer
 *    publishes "storing into this word" where the callback can see it, then
 *    loads the word (acquire); with state M and BLOCKED clear it stores and
 *    withdraws the announcement (release), else it withdraws it and takes
 *    the calls above. The callback makes pending announcements visible (an
 *    asymmetric fence: membarrier) and waits for the announcers.
 * Any other outcome means: take the calls above. */
#define DJAVA_SOS_WORD_STATE_MASK 3u
#define DJAVA_SOS_WORD_STATE_I 0u
#define DJAVA_SOS_WORD_STATE_S 1u
#define DJAVA_SOS_WORD_STATE_M 2u
#define DJAVA_SOS_WORD_BLOCKED 4u
#define DJAVA_SOS_WORD_PIN_SHIFT 32
volatile uint64_t* djava_sos_word(djava_sos_chunk* chunk);
/* What djava_sos_release does after its fetch-and-sub when the old word had
 * BLOCKED and one pin: the revocation that waited for the access runs. */
void djava_sos_release_last(djava_sos_chunk* chunk);

/* The bytes, when the client keeps them; valid during an access. */
void* djava_sos_data(djava_sos_chunk* chunk);
size_t djava_sos_size(const djava_sos_chunk* chunk);
/* The chunk's meta (valid while the client lives); null in state I before
 * the first fetch. */
const djava_sos_meta* djava_sos_meta_of(const djava_sos_chunk* chunk);

/* Ask for read copies of many chunks in one frame and return at once;
 * later loads of them find the bytes here. */
djava_sos_status djava_sos_prefetch(djava_sos_client* client, const uint64_t* ids, size_t n,
                                    djava_sos_error* error);
/* The same for write access (M), without data for a chunk whose read copy
 * here is current: for a sequential write scan. Chunks already in M here
 * are skipped. */
djava_sos_status djava_sos_prefetch_exclusive(djava_sos_client* client, const uint64_t* ids,
                                              size_t n, djava_sos_error* error);
/* Read copies (exclusive 0) or write access (1) to the chunks of a scan's
 * window ahead of it, in one frame, only when at least at_least of them (or
 * ids[0]) are still to be asked for: a scan that keeps the window ahead
 * refills it a batch at a time instead of a chunk at each access. */
djava_sos_status djava_sos_prefetch_window(djava_sos_client* client, const uint64_t* ids, size_t n,
                                           int exclusive, size_t at_least,
                                           djava_sos_error* error);
/* Write access, only for chunks no node was granted write access to since their
 * making (its publisher's bytes): for a walk that will write what it
 * fetches, which must not take what another node is writing. The others
 * are left as they are here (an access to one asks for it itself). */
djava_sos_status djava_sos_prefetch_first_writes(djava_sos_client* client, const uint64_t* ids,
                                                 size_t n, djava_sos_error* error);

/* Delete a chunk from the system. Refused (DJAVA_SOS_IN_USE) while another
 * node holds a copy. */
djava_sos_status djava_sos_free(djava_sos_chunk* chunk, djava_sos_error* error);

/* Forget a chunk whose id never left this node (a publication undone
 * before anyone could learn of it): no message; accesses fail as for a
 * freed chunk. Never waits, so a produce callback may call it. */
void djava_sos_discard(djava_sos_chunk* chunk);

/* The JVM no longer has the object a read copy was installed into (GC
 * collected its replica): the copy is dropped (S -> I, no message; the
 * server's later invalidate is acknowledged as for any invalid copy), so the
 * next access fetches the bytes again, into whatever object the JVM makes.
 * orphan_user is the chunk's user value the JVM read when it found no live
 * object for the chunk; if the value is another by now, the JVM has made a
 * new object since, whose copy this may be (a write upgrade of it under
 * way, which the server grants without bytes): DJAVA_SOS_IN_USE, with
 * nothing changed. The same if the chunk is modified here (its bytes exist
 * nowhere else). Bytes being installed meanwhile stay (the install callback
 * puts them into the object the JVM has then). A clean grant never written
 * here (reads it as S) goes home without bytes, and the next access waits
 * for the server's answer before it asks again. A write-back's copy kept
 * for the orphan is not made readable by the answer. Never waits. */
djava_sos_status djava_sos_drop_copy(djava_sos_chunk* chunk, uintptr_t orphan_user);

/* The distributed garbage collector (docs/SOS.md, "Freeing chunks while a
 * program runs"). The server counts the chunks it ships this node (a
 * grant, and the ids among a granted chunk's refs), and frees a chunk once
 * no node holds it and no reachable chunk's bytes name it.
 *
 * The JVM has no object for the chunk any more (GC collected its replica;
 * its user value is 0 now): once nothing here holds it either (no access,
 * request or revocation under way, no grant naming it waits to be
 * installed), the client releases it — one message for many — and forgets
 * the handle, as djava_sos_forget_program does. A handle whose user value
 * is set again before that stays. To look an id up and name its handle
 * from an object, a JVM holds the handles (djava_sos_hold_handles) from
 * djava_sos_chunk_for until it has set the user value, so that the client
 * never lets go of a handle in between. Never waits. */
void djava_sos_unreferenced(djava_sos_chunk* chunk);
/* The JVM keeps a pointer to a handle no object names (the statistics of a
 * collected replica): the client does not release it until as many
 * unretains, the last of which makes it a candidate as
 * djava_sos_unreferenced does. Never wait. */
void djava_sos_retain(djava_sos_chunk* chunk);
/* Writes a chunk this node holds modified home, unasked, and keeps a read
 * copy once the server accepts it (an access meanwhile waits for the
 * answer): the JVM need no longer hold its object for its bytes (its
 * produce callback lets go, as for a flush). The next write here upgrades
 * (a round trip without bytes). DJAVA_SOS_IN_USE, with nothing done, unless the
 * chunk is in M here with nothing under way. Takes the chunk's mutex; the
 * JVM calls it in native state. */
djava_sos_status djava_sos_write_back(djava_sos_chunk* chunk);
/* Data leaves with the release (docs/SOS.md): how many chunks this node has
 * taken exclusively so far (granted exclusive, or made here), taken as a
 * mark when a thread here is granted a monitor. Never waits. */
uint64_t djava_sos_exclusive_mark(djava_sos_client* client);
/* The monitor is about to leave for another node: writes home and drops
 * (keeping no copy) the newest `max` of the chunks taken exclusively since
 * `since` that are still idle in M here and are the releasing thread's
 * `program`'s (the log is the node's, and the next holder runs only that
 * program: another's chunk granted there would outlive its program on that
 * node), as djava_sos_write_back does, and puts their ids in `out`. Returns
 * how many (none for program 0). The JVM calls it, before the release it
 * names them in, from a thread whose accesses have all ended; it waits
 * neither for the network nor for a chunk another thread holds. */
size_t djava_sos_hand_over(djava_sos_client* client, uint64_t since, uint64_t program,
                           uint32_t flags, uint64_t* out, size_t max);
/* djava_sos_hand_over's flags. JDK_ONLY: only chunks of the JDK's classes
 * (a synchronizer's release: see Client::HandOver). */
#define DJAVA_SOS_HAND_OVER_JDK_ONLY 1u
void djava_sos_unretain(djava_sos_chunk* chunk);
/* Called by the produce callback, before it returns the bytes of a flush:
 * the chunk ids they name, each once (the server's edges between chunks),
 * and of those, or of this chunk, the arrays kept in blocks: run_blocks[i]
 * chunks with the ids after run_heads[i] are its blocks. Copied. */
void djava_sos_produced_refs(djava_sos_chunk* chunk, const uint64_t* ids, size_t n,
                             const uint64_t* run_heads, const uint32_t* run_blocks, size_t n_runs);

/* The JVM let go of every object of a program (the program ended on this
 * node): the client forgets its handles of that program's chunks (a
 * chunk's program is its class descriptor's) and those in `released` (the
 * JVM's own list of the program's handles: some never had their class
 * here), except those in `kept`, which the JVM still references, and any
 * in use (an access, a request or revocation under way, a waiter). The JVM
 * must not use a forgotten handle again (djava_sos_chunk_for gives a new
 * one for the id); its memory goes once no thread of the client can hold
 * it and a grace period has passed. Returns how many were forgotten. Never
 * waits for the network. */
size_t djava_sos_forget_program(djava_sos_client* client, uint64_t program,
                                djava_sos_chunk* const* kept, size_t n_kept,
                                djava_sos_chunk* const* released, size_t n_released);
/* Between hold and unhold no forgotten handle is freed and no handle is
 * released: for a JVM that reads handles it listed before they may have
 * been forgotten (its statistics), or that looks a handle up to name it
 * (djava_sos_unreferenced). May be nested; may wait a moment for a free
 * or a release in progress, which never waits for a holder. */
void djava_sos_hold_handles(djava_sos_client* client);
void djava_sos_unhold_handles(djava_sos_client* client);
/* How many handles the client has (forgotten ones not counted). */
size_t djava_sos_handle_count(djava_sos_client* client);

/* What made produce say DJAVA_SOS_PRODUCE_LATER may be over (a JVM's fence
 * completed, a lock was released): the flushes put off are tried again now
 * instead of after the retry thread's back-off. Never waits. */
void djava_sos_retry_deferred(djava_sos_client* client);

/* Cached accesses are not counted: a shared counter would cost more than
 * the access itself. */
typedef struct {
  uint64_t misses;             /* accesses that asked the server */
  uint64_t upgrades;           /* of those, S -> M without data */
  uint64_t invalidations;      /* read copies dropped for the server */
  uint64_t flushes;            /* modified copies sent to the server */
  uint64_t bytes_in;
  uint64_t bytes_out;
  uint64_t deferred_flushes;   /* flushes put off: produce said LATER */
  uint64_t releases_handed_off; /* the last release of an access whose chunk
                                 * another thread held: finished by the
                                 * client's retry thread (client-wide only) */
  uint64_t handles_freed;      /* forgotten handles whose memory went
                                * (client-wide only) */
  uint64_t chunks_released;    /* chunks this node said it no longer holds
                                * (client-wide only) */
  uint64_t release_messages;   /* the messages that said so */
  uint64_t written_back;       /* modified copies written home unasked
                                * (client-wide only) */
} djava_sos_stats;
void djava_sos_get_stats(const djava_sos_client* client, djava_sos_stats* stats);
/* The cache's messages by kind, each way: "requests read 12, write 3; on the
 * bypass invalidate_ack 2, flush_reply 5; received grant 15, invalidate 2"
 * (sos.proto's names), into out (at most max bytes with the NUL; NULL/0:
 * only the length). Returns the text's length. */
size_t djava_sos_traffic(const djava_sos_client* client, char* out, size_t max);
/* One chunk's share of those counters (a JVM's statistics per class). */
void djava_sos_chunk_stats(djava_sos_chunk* chunk, djava_sos_stats* stats);
/* The same, and the chunk's share starts again from zero (the JVM folds a
 * collected replica's share into its class's). */
void djava_sos_take_chunk_stats(djava_sos_chunk* chunk, djava_sos_stats* stats);

#ifdef __cplusplus
}
#endif

#endif /* DJAVA_SOS_CLIENT_H_ */
