/*
 * djava: shared weak and soft references.
 *
 * A java.lang.ref.WeakReference or SoftReference (and a subclass of one: a
 * WeakHashMap's entry, ArrayBlockingQueue's list of its iterators) may be
 * shared like any object. Its `referent` travels as a reference field
 * (HotSpot leaves it out of the class's oop maps, since its GC treats it
 * specially); `discovered`, the GC's link, and SoftReference's `timestamp`,
 * a reading of its node's own clock, are node-local fields.
 *
 * No node's GC clears a shared reference: each node's collector sees only
 * its own replicas, so an object only weakly reachable there may be
 * strongly reachable on another node, and a clear there would be a write to
 * a shared object outside coherence (one node reading null, another the
 * object). A shared reference's referent is therefore strong while the
 * reference is shared: the referent lives as long as the reference does
 * (the distributed GC reclaims both together). The specification allows it:
 * a reference is cleared when the collector determines its referent weakly
 * reachable, and a collector that never does so never clears it. clear(),
 * enqueue(), refersTo() and get() by the program work on any node and are
 * coherent (JVM_ReferenceClear and JVM_ReferenceRefersTo take an access;
 * Reference.get runs as bytecode on a node, patches/0025).
 *
 * How the GC knows: a shared reference's `discovered` field points to the
 * reference itself (mark_shared), which the serial collector's discovery
 * takes as "not a candidate" and then marks the referent as a strong field
 * (patches/0025). The mark word cannot say it: full GC replaces the mark
 * while it marks. `discovered` is otherwise non-null only on the pending
 * list, whose references have no referent any more and are never
 * discovered again, or for the length of one GC.
 *
 * Phantom and final references stay unshareable: their whole point is the
 * notification by the GC of one node (a Cleaner's action, a finalizer).
 */

#ifndef SHARE_DSO_DSOREFERENCES_HPP
#define SHARE_DSO_DSOREFERENCES_HPP

#include "memory/allStatic.hpp"
#include "oops/oopsHierarchy.hpp"

class InstanceKlass;
class Klass;

class DsoReferences : AllStatic {
 public:
  // Why an instance of k, a subclass of java.lang.ref.Reference, cannot be
  // shared, or NULL if it can.
  static const char* unshareable_reason(Klass* k);

  // Whether the field at offset of an instance of k stays on its node
  // (Reference.discovered, SoftReference.timestamp); *size is its size.
  static bool is_node_local_field(Klass* k, int offset, int* size);

  // The offset of the referent if ik is a reference class: a reference
  // field that travels though no oop map names it; -1 otherwise.
  static int extra_reference_slot(InstanceKlass* ik);

  // Called as obj becomes shared on this node (published, or a replica made)
  // and as it stops being shared (its program ended): sets or clears the
  // marker the GC's discovery reads. No safepoint.
  static void mark_shared(oop obj);
  static void unmark_shared(oop obj);

  // For the GC's reference discovery (ReferenceProcessor::discover_reference):
  // whether ref is a shared reference, whose referent is strong. At a
  // safepoint, while the collector copies or marks; ref is where the
  // collector scans it (a young collection's copy: its `discovered` still
  // holds the old address, which is forwarded to ref).
  static bool is_shared_in_gc(oop ref);
};

#endif // SHARE_DSO_DSOREFERENCES_HPP
