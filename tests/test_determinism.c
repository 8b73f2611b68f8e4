/* test_determinism.c: one command line, one set of output bytes: the PNG
 * (its water too), the OBJ (with its water object, MTL and texture), the
 * height maps and the water map are identical across runs, thread counts
 * and backends whose fields are identical. */
#include <stdio.h>
#include <string.h>

#include "test.h"

WG_TEST(determinism_outputs_identical_across_runs_threads_backends)
{
    /* Each variant writes into its own folder; every file must equal the
     * first variant's.  A backend that is not available here is skipped
     * by the shell loop (its probe fails on --size 2). */
    char cmd[2400];
    snprintf(cmd, sizeof cmd,
             "set -e; n=0; ref=''; "
             "for v in 'scalar 1' 'scalar 1' 'openmp 1' 'openmp 2' 'openmp 3' 'openmp 7' "
             "'vulkan 2' 'all 2'; do "
             "  set -- $v; "
             "  ./worldgen --size 2 --mesh $1 -q --no-image 2>/dev/null || continue; "
             "  n=$((n+1)); d=run$n; mkdir -p $d; "
             "  ./worldgen --size 97 --seed 0xBEEF --octaves 7 --erosion 5 --mesh $1 "
             "    --threads $2 -q --width 240 --height 180 --aa 2 --azimuth 120 "
             "    --out $d/w.png --obj $d/w.obj --heightmap $d/h.png; "
             "  ./worldgen --size 97 --seed 0xBEEF --octaves 7 --erosion 5 --mesh $1 "
             "    --threads $2 -q --no-image --heightmap $d/h.pfm --watermap $d/w.pfm; "
             "  if [ -z \"$ref\" ]; then ref=$d; continue; fi; "
             "  for f in w.png w.obj w.mtl w_albedo.png h.png h.pfm w.pfm; do "
             "    cmp -s $ref/$f $d/$f || { echo \"$f differs for $1 with $2 threads\"; exit 1; }; "
             "  done; "
             "done; echo \"compared $n runs\"");
    wg_cli c = wg_cli_sh(cmd);
    CHECK(c.status == 0, "%s %s", c.out, c.err);
    int n = 0;
    CHECK(sscanf(c.out, "compared %d runs", &n) == 1 && n >= 6, "%s", c.out);
    wg_cli_free(&c);
}
