/* keygate-gatekeeper's first lines (start.c; docs/GATEKEEPER.md, "At start, against sudo"): a
   constructor the loader runs before the Swift runtime starts, so nothing the caller chose
   reaches the runtime or the program. It exports nothing: linking the target is what runs it. */
#ifndef KEYGATE_GATEKEEPER_START_H
#define KEYGATE_GATEKEEPER_START_H
#endif
