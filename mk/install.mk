# mk/install.mk -- the C library (libdyndb), `make install` and
# `make uninstall`.
#
#   make lib         $(BUILD)/libdyndb.a, $(BUILD)/libdyndb.so.VERSION,
#                    $(BUILD)/dyndb.pc
#   make install     PREFIX=/usr/local (default), DESTDIR= for staging
#   make uninstall   the same PREFIX and DESTDIR: removes exactly the
#                    files install put there (and the extension's own
#                    folder, when empty)
#
# What install puts where:
#
#   $(EXTDIR)/dynamodb.so            the SQLite extension
#                                    (.load $(EXTDIR)/dynamodb)
#   $(LIBDIR)/libdyndb.so.VERSION    the C library, shared: client/, cache/
#   $(LIBDIR)/libdyndb.so.MAJOR      and api/, exporting only dyn_*
#   $(LIBDIR)/libdyndb.so            (api/libdyndb.map)
#   $(LIBDIR)/libdyndb.a             the same, static: one object whose
#                                    only global symbols are dyn_*
#   $(INCLUDEDIR)/dyndb.h            the one public header
#   $(PKGCONFIGDIR)/dyndb.pc         cc app.c $(pkg-config --cflags
#                                    --libs dyndb)
#
# The paths in dyndb.pc are PREFIX's, without DESTDIR.
#
# So that a program built against the installed library runs without
# LD_LIBRARY_PATH: when LIBDIR is a folder the dynamic linker searches
# (/usr/local/lib, /usr/lib/...: the folders of /etc/ld.so.conf and
# ldconfig's own), `make install` without DESTDIR runs ldconfig (as root;
# otherwise it says to); for any other LIBDIR, dyndb.pc's Libs carry
# -Wl,-rpath,LIBDIR, so `cc app.c $(pkg-config --cflags --libs dyndb)`
# writes the folder into the program.

PREFIX       ?= /usr/local
DESTDIR      ?=
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
EXTDIR       ?= $(LIBDIR)/sqlite-dynamodb
INSTALL      ?= install
OBJCOPY      ?= objcopy

# (DYN_VERSION: the Makefile's, read from api/dyndb.h)
DYN_MAJOR   := $(firstword $(subst ., ,$(DYN_VERSION)))
DYN_SO      := libdyndb.so.$(DYN_VERSION)
DYN_OBJ     := $(LIB_OBJ) $(API_OBJ)

# The folders the dynamic linker searches (recursive: ldconfig runs only
# when a rule needs it), and whether LIBDIR is one of them.
LDCONFIG       ?= $(firstword $(wildcard /sbin/ldconfig /usr/sbin/ldconfig) \
                    ldconfig)
LDSO_DIRS       = $(shell $(LDCONFIG) -v -N -X 2>/dev/null | \
                    sed -n 's/^\([^[:space:]][^:]*\):.*/\1/p') /lib /usr/lib
# (both sides also with symbolic links resolved: where /lib is a link to
# usr/lib, ldconfig names /lib/x86_64-linux-gnu for /usr/lib/x86_64-linux-gnu)
DYN_SYSTEM_LIB  = $(filter $(abspath $(LIBDIR)) $(realpath $(LIBDIR)),\
                    $(LDSO_DIRS) $(realpath $(LDSO_DIRS)))
DYN_RPATH       = $(if $(DYN_SYSTEM_LIB),,-Wl,-rpath,$${libdir})

.PHONY: lib install uninstall
lib: $(BUILD)/libdyndb.a $(BUILD)/$(DYN_SO) $(BUILD)/dyndb.pc

$(BUILD)/$(DYN_SO): $(DYN_OBJ) api/libdyndb.map
	$(CC) -shared -Wl,-soname,libdyndb.so.$(DYN_MAJOR) \
	    -Wl,--version-script=api/libdyndb.map -Wl,--no-undefined \
	    -o $@ $(DYN_OBJ) $(LDFLAGS) $(LIBS)

# One relocatable object of everything, then every symbol but dyn_* made
# local, so that a program linking the archive sees only the public API.
$(BUILD)/libdyndb.a: $(DYN_OBJ)
	$(CC) -r -nostdlib -o $(BUILD)/libdyndb-all.o $(DYN_OBJ)
	$(OBJCOPY) -w --keep-global-symbol='dyn_*' $(BUILD)/libdyndb-all.o
	rm -f $@
	ar rcs $@ $(BUILD)/libdyndb-all.o

# libdir and includedir are written as ${prefix}/... when under PREFIX,
# so that `pkg-config --define-prefix` can move a copy (as the .deb's,
# extracted anywhere: tests/suites/70-packages.sh).
DYN_PC_LIBDIR     = $(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))
DYN_PC_INCLUDEDIR = $(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))
$(BUILD)/dyndb.pc: api/dyndb.pc.in api/dyndb.h mk/install.mk
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(DYN_PC_LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(DYN_PC_INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(DYN_VERSION)|' \
	    -e 's| @RPATH@|$(if $(DYN_RPATH), $(DYN_RPATH))|' \
	    api/dyndb.pc.in > $@

# dyndb.pc depends on PREFIX: build it fresh for every install.
install: loadable lib
	rm -f $(BUILD)/dyndb.pc
	$(MAKE) --no-print-directory $(BUILD)/dyndb.pc
	$(INSTALL) -d $(DESTDIR)$(EXTDIR) $(DESTDIR)$(LIBDIR) \
	    $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR)
	$(INSTALL) -m 755 $(BUILD)/dynamodb.so $(DESTDIR)$(EXTDIR)/dynamodb.so
	$(INSTALL) -m 755 $(BUILD)/$(DYN_SO) $(DESTDIR)$(LIBDIR)/$(DYN_SO)
	ln -sf $(DYN_SO) $(DESTDIR)$(LIBDIR)/libdyndb.so.$(DYN_MAJOR)
	ln -sf libdyndb.so.$(DYN_MAJOR) $(DESTDIR)$(LIBDIR)/libdyndb.so
	$(INSTALL) -m 644 $(BUILD)/libdyndb.a $(DESTDIR)$(LIBDIR)/libdyndb.a
	$(INSTALL) -m 644 api/dyndb.h $(DESTDIR)$(INCLUDEDIR)/dyndb.h
	$(INSTALL) -m 644 $(BUILD)/dyndb.pc $(DESTDIR)$(PKGCONFIGDIR)/dyndb.pc
	@if [ -z "$(DESTDIR)" ] && [ -n "$(DYN_SYSTEM_LIB)" ]; then \
	  if [ "$$(id -u)" = 0 ]; then echo "$(LDCONFIG)"; $(LDCONFIG); \
	  else echo "install: run '$(LDCONFIG)' as root, so that programs" \
	    "find libdyndb.so.$(DYN_MAJOR) in $(LIBDIR)"; fi; \
	fi

uninstall:
	rm -f $(DESTDIR)$(EXTDIR)/dynamodb.so \
	    $(DESTDIR)$(LIBDIR)/$(DYN_SO) \
	    $(DESTDIR)$(LIBDIR)/libdyndb.so.$(DYN_MAJOR) \
	    $(DESTDIR)$(LIBDIR)/libdyndb.so \
	    $(DESTDIR)$(LIBDIR)/libdyndb.a \
	    $(DESTDIR)$(INCLUDEDIR)/dyndb.h \
	    $(DESTDIR)$(PKGCONFIGDIR)/dyndb.pc
	-rmdir $(DESTDIR)$(EXTDIR) 2>/dev/null
