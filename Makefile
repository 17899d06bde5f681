# djava top-level build. `make` builds everything; `make test` runs every suite;
# `make demo` runs the demo. Each target installs what it needs (apt, as root).
SHELL := /bin/bash
TOP := $(abspath .)
BUILD := $(TOP)/build
PYTHON := /usr/bin/python3

APT_NATIVE := build-essential cmake ninja-build pkgconf protobuf-compiler libprotobuf-dev \
              libssl-dev libasio-dev libgtest-dev googletest clang libclang-rt-14-dev \
              libucx-dev
# maven: the djava JDK home's test runs a Maven project's JUnit 5 tests
# (plugins and JUnit from Maven Central, cached in ~/.cache/djava/m2).
APT_TEST := python3-pytest jtreg7 junit4 maven systemd
# bench/now (its smoke test is in make test): namespaces, links and their delay.
APT_BENCH_NOW := iproute2
# bench/report.py's plots; test/py/bench runs the report on fixtures, so the
# tests need it too.
APT_BENCH := python3-matplotlib $(APT_BENCH_NOW)
APT_TEST += $(APT_BENCH)
# Building libjvm from OpenJDK source (configure checks for the headers even
# though only libjvm is built) and assembling the image.
APT_JVM := build-essential autoconf zip unzip file xz-utils patch ccache dpkg-dev \
           ca-certificates libffi-dev libcups2-dev libasound2-dev libfontconfig-dev \
           libfreetype-dev libx11-dev libxext-dev libxrender-dev libxrandr-dev libxtst-dev libxt-dev
# What the pinned class library's native libraries link against at run time.
APT_RUNTIME := libffi8 libcups2 libfontconfig1 liblcms2-2 libjpeg62-turbo libnss3 libasound2 \
               libfreetype6 libharfbuzz0b libpcsclite1 zlib1g
# What libdjava_node.so (the JVM's cluster client, built by `native`) links against.
APT_RUNTIME += libprotobuf32 libssl3 libucx0

DJAVA_VERSION := 0.1.0
DJAVA_COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell \
                  git diff --quiet HEAD -- jvm patches 2>/dev/null || echo -dirty)
CACHE := $(or $(DJAVA_CACHE),$(HOME)/.cache/djava)
JVM := $(BUILD)/jvm
REF_SRC := $(JVM)/ref
DJAVA_SRC := $(JVM)/djava
BASE_IMAGE := $(JVM)/base-image
RUNTIME_JAR := $(JVM)/djava-runtime.jar
JAVA_BASE_JAR := $(JVM)/djava-java.base.jar
OVERLAY := --overlay jvm/hotspot:src/hotspot
include jvm/pins
TARBALL := $(CACHE)/$(PIN_SRC_SHA256)/$(PIN_SRC_FILE)
# Where OpenJDK 17's build puts the libjvm of a configuration's (single)
# variant: build/zero and build/server.
LIBJVM_OUT = build/$(1)/support/modules_libs/java.base/server/libjvm.so

.PHONY: all jdk jdk-ref djava-home libjvm native test test-native test-py test-jtreg test-jtreg-distributed test-jtreg-tiers test-jtreg-c2 test-jtreg-c2-only test-jtreg-tcp test-jtreg-ucx-tcp test-jtreg-shards test-jtreg-matrix test-openjdk test-openjdk-local test-openjdk-zero test-openjdk-c2 test-matrix \
        launcher demo bench install \
        deps-native deps-test deps-bench deps-jvm fetch patch-tree refresh-patches clean

all: jdk jdk-ref native launcher djava-home

deps-jvm:
	@tools/ensure-apt-packages $(APT_JVM) $(APT_RUNTIME)

# ---- pinned sources ---------------------------------------------------------
fetch: deps-jvm
	@jvm/fetch-sources $(CACHE)

# A stamp beside the image: files unpacked by dpkg keep the package's dates.
BASE_STAMP := $(JVM)/base-image.stamp
$(BASE_STAMP): jvm/pins jvm/assemble-base-image jvm/tools/MakeCacerts.java | fetch
	jvm/assemble-base-image $(CACHE) $(BASE_IMAGE)
	touch $@

# The unpatched tree: the reference VM's source, and the pristine side of the
# patch workflow. Never edited.
$(REF_SRC)/.extracted: jvm/pins | fetch
	rm -rf $(REF_SRC) && mkdir -p $(REF_SRC)
	tar xJf $(TARBALL) -C $(REF_SRC) --strip-components=1
	touch $@

$(DJAVA_SRC)/.extracted: jvm/pins | fetch
	rm -rf $(DJAVA_SRC) && mkdir -p $(DJAVA_SRC)
	tar xJf $(TARBALL) -C $(DJAVA_SRC) --strip-components=1
	touch $@

%/build/zero/spec.gmk: %/.extracted jvm/configure-openjdk $(BASE_STAMP)
	jvm/configure-openjdk $* $(BASE_IMAGE) zero

# The server variant (template interpreter, C1, C2) of the djava tree only.
$(DJAVA_SRC)/build/server/spec.gmk: $(DJAVA_SRC)/.extracted jvm/configure-openjdk $(BASE_STAMP)
	jvm/configure-openjdk $(DJAVA_SRC) $(BASE_IMAGE) server

# ---- libjvm: reference and djava --------------------------------------------
$(JVM)/libjvm-ref.so: $(REF_SRC)/build/zero/spec.gmk
	$(MAKE) -C $(REF_SRC) hotspot CONF=zero LOG=warn
	cp $(REF_SRC)/$(call LIBJVM_OUT,zero) $@

# Always descends into OpenJDK's make: it knows what changed. prepare_tree only
# rewrites files whose content changed, so untouched files are not rebuilt.
# Both variants of the djava tree: Zero (the default VM, and the reference
# the server VM is compared with) and server.
libjvm: $(DJAVA_SRC)/build/zero/spec.gmk $(DJAVA_SRC)/build/server/spec.gmk $(REF_SRC)/.extracted
	$(PYTHON) jvm/tools/prepare_tree.py --pristine $(REF_SRC) --target $(DJAVA_SRC) \
	    --patches patches $(OVERLAY)
	$(MAKE) -C $(DJAVA_SRC) hotspot CONF=zero LOG=warn \
	    DJAVA_VM_VERSION=$(DJAVA_VERSION)-$(DJAVA_COMMIT)
	$(MAKE) -C $(DJAVA_SRC) hotspot CONF=server LOG=warn \
	    DJAVA_VM_VERSION=$(DJAVA_VERSION)-$(DJAVA_COMMIT)
	@cmp -s $(DJAVA_SRC)/$(call LIBJVM_OUT,zero) $(JVM)/libjvm-djava.so || \
	    cp $(DJAVA_SRC)/$(call LIBJVM_OUT,zero) $(JVM)/libjvm-djava.so
	@cmp -s $(DJAVA_SRC)/$(call LIBJVM_OUT,server) $(JVM)/libjvm-djava-server.so || \
	    cp $(DJAVA_SRC)/$(call LIBJVM_OUT,server) $(JVM)/libjvm-djava-server.so

# ---- JDK images ---------------------------------------------------------------
# build/jdk: the pinned class library with our Zero libjvm as the default VM
# and our server libjvm as `-server` (a node on it runs interpreted until
# the JIT tier carries the shared-object checks). Stock HotSpot, for the
# benchmarks' comparisons, is the base image's java (same class library).
# It carries lib/libdjava_node.so, the cluster client -XX:+DistributedJava
# loads, lib/djava-runtime.jar, the Java side of a node (jvm/classes), and
# lib/djava-java.base.jar, a node's hooks in java.base.
jdk: libjvm native $(RUNTIME_JAR) $(JAVA_BASE_JAR) $(BASE_STAMP)
	jvm/assemble-jdk $(BASE_IMAGE) $(JVM)/libjvm-djava.so $(BUILD)/jdk $(BUILD)/lib/libdjava_node.so \
	    $(RUNTIME_JAR) $(JVM)/libjvm-djava-server.so $(JAVA_BASE_JAR)

# lib/djava-java.base.jar: the java.base classes a node puts in front of the
# class library's (-XX:+DistributedJava; dso/dso.cpp): sources of the pinned
# tree as patches/ leave them, and our own (jvm/java.base). After libjvm,
# whose prepare_tree brings the tree's sources up to date.
JAVA_BASE_PATCHED := java/util/concurrent/locks/AbstractQueuedSynchronizer.java \
    java/util/concurrent/locks/ReentrantLock.java \
    $(addprefix java/util/concurrent/,CompletableFuture.java ForkJoinPool.java \
        CyclicBarrier.java ForkJoinTask.java SubmissionPublisher.java) \
    java/util/Locale.java java/util/TimeZone.java
JAVA_BASE_SOURCES := $(shell find jvm/java.base -name '*.java') \
    $(addprefix $(DJAVA_SRC)/src/java.base/share/classes/,$(JAVA_BASE_PATCHED))
$(JAVA_BASE_JAR): $(JAVA_BASE_SOURCES) $(BASE_STAMP) | libjvm
	rm -rf $(JVM)/java.base-src $(JVM)/java.base-classes
	mkdir -p $(JVM)/java.base-src
	cp -r jvm/java.base/. $(JVM)/java.base-src/
	cd $(DJAVA_SRC)/src/java.base/share/classes && \
	    cp --parents $(JAVA_BASE_PATCHED) $(abspath $(JVM))/java.base-src/
	$(BASE_IMAGE)/bin/javac -Xlint:all -Werror -implicit:none -XDignore.symbol.file \
	    --patch-module java.base=$(JVM)/java.base-src -d $(JVM)/java.base-classes \
	    $$(find $(JVM)/java.base-src -name '*.java')
	$(BASE_IMAGE)/bin/jar --create --file $@ -C $(JVM)/java.base-classes .

RUNTIME_SOURCES := $(shell find jvm/classes -name '*.java')
$(RUNTIME_JAR): $(RUNTIME_SOURCES) $(BASE_STAMP)
	rm -rf $(JVM)/runtime-classes
	$(BASE_IMAGE)/bin/javac -Xlint:all -Werror -d $(JVM)/runtime-classes $(RUNTIME_SOURCES)
	$(BASE_IMAGE)/bin/jar --create --file $@ -C $(JVM)/runtime-classes .

# build/jdk-ref: the same, with a Zero libjvm built without our patches.
jdk-ref: $(JVM)/libjvm-ref.so $(BASE_STAMP)
	jvm/assemble-jdk $(BASE_IMAGE) $(JVM)/libjvm-ref.so $(BUILD)/jdk-ref

# djava (the java command), thread-server (a workstation's daemon) and
# djava-cluster (a whole cluster on one workstation); docs in README.md.
LAUNCHER_SCRIPTS := $(addprefix $(BUILD)/bin/,djava thread-server djava-cluster)
launcher: $(LAUNCHER_SCRIPTS)

$(LAUNCHER_SCRIPTS): $(BUILD)/bin/%: jvm/bin/%
	install -D -m 755 $< $@

# build/djava-home: a JDK home whose bin/java is djava, for tools that fork
# a JVM by a path ending in bin/java (mvn test -Djvm=build/djava-home/bin/java).
djava-home: jdk launcher
	jvm/assemble-djava-home $(BUILD)/jdk $(BUILD)/bin/djava $(BUILD)/djava-home

# make install PREFIX=DIR: djava under DIR (an absolute path), runnable with
# no build tree: DIR/bin/djava, djava-cluster and thread-server, the image in
# DIR/lib/djava, and a systemd unit for a thread server (jvm/install-djava).
install: all
	@[ -n "$(PREFIX)" ] || { echo "make install: give PREFIX=DIR (an absolute path)" >&2; exit 2; }
	jvm/install-djava $(BUILD) $(PREFIX)

# ---- patch workflow ---------------------------------------------------------
patch-tree: $(REF_SRC)/.extracted
	$(PYTHON) jvm/tools/patch_tree.py create --pristine $(REF_SRC) --tree $(BUILD)/patch-tree \
	    --patches patches $(OVERLAY)

refresh-patches:
	$(PYTHON) jvm/tools/patch_tree.py refresh --tree $(BUILD)/patch-tree --patches patches

clean:
	rm -rf $(BUILD)

deps-native:
	@tools/ensure-apt-packages $(APT_NATIVE)

deps-test:
	@tools/ensure-apt-packages $(APT_TEST)

deps-bench:
	@tools/ensure-apt-packages $(APT_BENCH)

native: deps-native
	cmake -S . -B $(BUILD)/native -G Ninja -Wno-dev
	cmake --build $(BUILD)/native

# ---- tests -------------------------------------------------------------------
test-native: native
	ctest --test-dir $(BUILD)/native --output-on-failure

test-py: all deps-test
	$(PYTHON) -m pytest test/py

# jtreg itself runs on the stock server VM of the base image; the tests run on
# build/jdk, locally and on real local clusters of 2 thread servers, as they
# are and with -Xmn2m on every node, in each of the server VM's tiers and on
# Zero (test/jtreg/run says how).
# test-jtreg-distributed: the cluster runs alone.
test-jtreg: all deps-test
	test/jtreg/run $(BUILD) $(BASE_IMAGE)/bin/java all

test-jtreg-distributed: all deps-test
	test/jtreg/run $(BUILD) $(BASE_IMAGE)/bin/java distributed

# The distributed suite with -Xmn2m: whole on the default VM, on Zero and with
# C2 tiered, a representative set in each other tier, transport and
# directory split (part of test-jtreg; test/jtreg/run names the set).
test-jtreg-tiers: all deps-test
	test/jtreg/run $(BUILD) $(BASE_IMAGE)/bin/java tiers

# With C2 compiling too, tiered and alone (both part of test-jtreg-tiers).
test-jtreg-c2: all deps-test
	test/jtreg/run $(BUILD) $(BASE_IMAGE)/bin/java c2

test-jtreg-c2-only: all deps-test
	test/jtreg/run $(BUILD) $(BASE_IMAGE)/bin/java c2-only

# Every connection on TCP instead of UCX (part of test-jtreg-tiers).
test-jtreg-tcp: all deps-test
	test/jtreg/run $(BUILD) $(BASE_IMAGE)/bin/java tcp

# On UCX over its own TCP transport (UCX_TLS=tcp; part of test-jtreg-tiers).
test-jtreg-ucx-tcp: all deps-test
	test/jtreg/run $(BUILD) $(BASE_IMAGE)/bin/java ucx-tcp

# The directory and the monitors split over 2 and over 4 sos-servers (part of
# test-jtreg-tiers).
test-jtreg-shards: all deps-test
	test/jtreg/run $(BUILD) $(BASE_IMAGE)/bin/java shards

# The whole distributed suite in every tier, transport and directory split
# above, and OpenJDK's tests and the TCK on 2 sos-servers (test-matrix's).
test-jtreg-matrix: all deps-test
	test/jtreg/run $(BUILD) $(BASE_IMAGE)/bin/java matrix

# OpenJDK's own tests and the JSR-166 TCK (test/jtreg/openjdk), distributed
# (part of test-jtreg), and the same on build/jdk alone: the baseline
# docs/CONFORMANCE.md compares with.
test-openjdk: all deps-test
	test/jtreg/run $(BUILD) $(BASE_IMAGE)/bin/java openjdk

test-openjdk-local: all deps-test
	test/jtreg/run $(BUILD) $(BASE_IMAGE)/bin/java openjdk-local

# The same with every node on Zero, the other VM (docs/CONFORMANCE.md).
test-openjdk-zero: all deps-test
	test/jtreg/run $(BUILD) $(BASE_IMAGE)/bin/java openjdk-zero

# The same with every node compiling with C2 too (-XX:+DjavaCompileWithC2,
# not yet the default).
test-openjdk-c2: all deps-test
	test/jtreg/run $(BUILD) $(BASE_IMAGE)/bin/java openjdk-c2

# Every suite in every configuration: make test's, djava's jtreg suite whole
# in every tier, transport and directory split, and OpenJDK's group and the
# TCK on Zero, with C2 and on 2 sos-servers. Results in docs/CONFORMANCE.md.
test-matrix: test test-jtreg-matrix test-openjdk-zero test-openjdk-c2

test: test-native test-py test-jtreg

# ---- benchmarks (not tests: numbers go to bench/results and docs/BENCHMARKS.md) ----
# Each driver prints its numbers as it goes and writes a table (and, for
# bench/report.py, JSON); the report then writes bench/results/README.md and
# the plots from them.
bench: all deps-bench
	@mkdir -p bench/results
	$(PYTHON) bench/micro/run.py --out bench/results/micro.md
	$(PYTHON) bench/micro/table6.py --out bench/results/table6.md --json bench/results/table6.json
	$(PYTHON) bench/micro/table6.py --vm server --out bench/results/table6-server.md \
	    --json bench/results/table6-server.json
	$(PYTHON) bench/micro/latency.py --out bench/results/latency.md --json bench/results/latency.json
	$(PYTHON) bench/micro/uncached.py --out bench/results/uncached.md
	$(PYTHON) bench/micro/blocks.py --out bench/results/blocks.md --json bench/results/blocks.json
	$(PYTHON) bench/micro/block_memory.py --out bench/results/block-memory.md \
	    --json bench/results/block-memory.json
	$(PYTHON) bench/micro/steal.py --out bench/results/steal.md --json bench/results/steal.json
	$(PYTHON) bench/micro/sync.py --delays 0,1ms --out bench/results/sync.md \
	    --json bench/results/sync.json
	$(PYTHON) bench/apps/run.py --out bench/results/apps.md --json bench/results/apps.json
	$(PYTHON) bench/apps/run.py --vm server --servers 1,2 --out bench/results/apps-server.md \
	    --json bench/results/apps-server.json
	$(PYTHON) bench/now/run.py --out bench/results/now.md --json bench/results/now.json
	$(PYTHON) bench/gc/stream.py --out bench/results/gc-stream.md --json bench/results/gc-stream.json
	$(BUILD)/bin/sos-bench --iterations 5000 | tee bench/results/sos.md
	bench/monitor/run-bench | tee bench/results/monitor.md
	$(PYTHON) bench/report.py --results bench/results

# ---- demo --------------------------------------------------------------------
# A real distributed run: djava starts a private cluster on loopback (a
# sos-server, a thread-manager, two thread servers), the multiply's four
# threads run in the thread servers' processes, and the launcher prints its
# shared-heap statistics.
demo: all
	@mkdir -p $(BUILD)/demo
	$(BASE_IMAGE)/bin/javac -d $(BUILD)/demo bench/apps/MatrixMultiply.java
	@echo "== djava demo: matrix multiply, 4 threads, on a private cluster of 2 thread servers"
	DJAVA_THREAD_SERVERS=2 $(BUILD)/bin/djava -XX:+PrintDistributedStatistics \
	    -cp $(BUILD)/demo MatrixMultiply 160 4
