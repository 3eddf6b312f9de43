/*
 * scenario_int.h - what scenario.c (parse and run) and scenario_export.c
 * (the history as a scenario) share: numbers written as a scenario writes
 * them, so an expectation's report and an exported weight read back the
 * same.  Only src/face includes it; everyone else sees scenario.h.
 */
#ifndef RINGSIM_SCENARIO_INT_H
#define RINGSIM_SCENARIO_INT_H

#ifndef RINGSIM_FACE_INTERNAL
#error "scenario_int.h is the scenarios' own (src/face/): others use scenario.h"
#endif

/* Bytes scenario__num_text writes at most, with the NUL. */
#define SCENARIO_NUM_TEXT 40

/* The shortest decimal text that reads back as v: a whole number below
 * 1e15 without a fraction ("3"), else the fewest significant digits
 * (%.1g to %.17g) that strtod returns as v.  Cannot fail. */
void scenario__num_text(char buf[SCENARIO_NUM_TEXT], double v);

#endif
