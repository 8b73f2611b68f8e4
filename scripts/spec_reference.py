#!/usr/bin/env python3
"""spec_reference.py: SPEC.md stages 1-3 in pure Python, written from the
SPEC's text alone by someone who had not read worldgen's code; it made the
stage 3 conformance vectors in tests/vectors (their README says how).  The
later change to stage 3's end (the water's running mean, the carried
sediment left in the water) was added from the SPEC's new lines.

Every binary32 operation is done in double and rounded once to binary32
(exact for a single + - * of binary32 operands).  Slow (a 64 world with 60
steps takes about 15 s): for vectors and for checking the SPEC, not for
worlds.

    python3 scripts/spec_reference.py --size 37 --octaves 3 --erosion 5 \
        --hydraulic 25 --sea-level 0.25 --seed 0xdeadbeef --prefix v37

Every argument is checked before anything is computed, against worldgen's
ranges and forms (--size 2..65536, --octaves 1..16, --erosion 0..10000,
--hydraulic 0..100000 and --seed 0..2^64-1, each decimal or 0x hex;
--sea-level a decimal number in 0..1), and so is the folder --prefix
writes in: a bad one is a usage error (exit 2) that names the option, the
value and the valid range.  The five outputs are written as a set: where
one cannot be written (exit 1), the files an earlier run left stay as they
were, and no temporary is left, on SIGINT, SIGTERM or SIGHUP either.  An
output that is a symbolic link is written through to its final target,
as worldgen's are (not another user's link in a sticky folder), and a
world too big for memory is a message, exit 1.
"""
import struct, math, sys, argparse, os, re, signal, stat, errno

_S = struct.Struct('<f')
_I = struct.Struct('<I')
def f32(x):
    return _S.unpack(_S.pack(x))[0]
def bits(x):
    return _I.unpack(_S.pack(x))[0]
def frombits(u):
    return _S.unpack(_I.pack(u & 0xFFFFFFFF))[0]
def hexf(s):
    return f32(float.fromhex(s.rstrip('f')))

M64 = (1 << 64) - 1
def lattice(seed):
    state = seed & M64
    L = []
    for _ in range(256 * 256):
        state = (state + 0x9E3779B97F4A7C15) & M64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        z = z ^ (z >> 31)
        L.append(f32(float(z >> 40) * 2.0 ** -24))
    return L

COS = [hexf(s) for s in ['0x1p+0f', '0x1.9aac4cp-1f', '0x1.2598acp-2f', '-0x1.5e5c7ap-2f',
       '-0x1.abd24ap-1f', '-0x1.ff207ep-1f', '-0x1.881fcp-1f', '-0x1.d7a912p-3f',
       '0x1.95ee64p-2f', '0x1.bb82c4p-1f', '0x1.fc82bcp-1f', '0x1.743cdap-1f',
       '0x1.6285p-3f', '-0x1.cc1de6p-2f', '-0x1.c9b008p-1f', '-0x1.f82902p-1f']]
SIN = [hexf(s) for s in ['0x0p+0f', '0x1.31c39ap-1f', '0x1.ea810ep-1f', '0x1.e11936p-1f',
       '0x1.19451ep-1f', '-0x1.de3374p-5f', '-0x1.493722p-1f', '-0x1.f23ca6p-1f',
       '-0x1.d60d56p-1f', '-0x1.ffa22p-2f', '0x1.dd62b2p-4f', '0x1.5f8b3cp-1f',
       '0x1.f8454p-1f', '0x1.c9671p-1f', '0x1.cafb52p-2f', '-0x1.65057p-3f']]

def terrain(N, octaves, L):
    inv_n = f32(1.0 / f32(float(N - 1)))
    BASE = 4.0
    norm = 0.0; amp = 1.0
    for o in range(octaves):
        norm += amp; amp *= 0.5
    norm = f32(norm)
    inv_norm = f32(1.0 / norm)
    def cell(ix, iy):
        return L[(iy & 255) * 256 + (ix & 255)]
    h = [0.0] * (N * N)
    for y in range(N):
        for x in range(N):
            s = 0.0
            for o in range(octaves):
                freq = float(2 ** o); amp = 2.0 ** -o
                ux = f32(f32(f32(float(x) * inv_n) * BASE) * freq)
                uy = f32(f32(f32(float(y) * inv_n) * BASE) * freq)
                off = f32(float(o * 17))
                px = f32(f32(f32(ux * COS[o]) - f32(uy * SIN[o])) + off)
                py = f32(f32(f32(ux * SIN[o]) + f32(uy * COS[o])) + off)
                flx = math.floor(px); fly = math.floor(py)
                ix = int(flx); iy = int(fly)
                fx = f32(px - flx); fy = f32(py - fly)
                a = cell(ix, iy); b = cell(ix + 1, iy)
                c = cell(ix, iy + 1); d = cell(ix + 1, iy + 1)
                wx = f32(f32(fx * fx) * f32(3.0 - f32(2.0 * fx)))
                wy = f32(f32(fy * fy) * f32(3.0 - f32(2.0 * fy)))
                lo = f32(a + f32(f32(b - a) * wx))
                hi = f32(c + f32(f32(d - c) * wx))
                v = f32(lo + f32(f32(hi - lo) * wy))
                r = f32(1.0 - abs(f32(f32(2.0 * v) - 1.0)))
                s = f32(s + f32(amp * f32(r * r)))
            h[y * N + x] = f32(s * inv_norm)
    return h

def neighbours(N):
    """per cell: its eight neighbours in spec order, (k, dx, dy), where k is
    a cell's index, or for a neighbour outside the grid (a ghost of stage 3,
    SPEC "The world's edge") the pair (e, j): its edge cell (the ghost
    clamped into the grid) and the cell j = e + (e - ghost) one further in"""
    def clampi(v): return 0 if v < 0 else (N - 1 if v >= N else v)
    res = []
    for y in range(N):
        for x in range(N):
            lst = []
            for dy in (-1, 0, 1):
                for dx in (-1, 0, 1):
                    if dx == 0 and dy == 0: continue
                    gx, gy = x + dx, y + dy
                    if 0 <= gx < N and 0 <= gy < N:
                        lst.append((gy * N + gx, dx, dy))
                    else:
                        ex, ey = clampi(gx), clampi(gy)
                        jx, jy = ex + (ex - gx), ey + (ey - gy)
                        lst.append(((ey * N + ex, jy * N + jx), dx, dy))
            res.append(lst)
    return res

def thermal(N, h, passes, NB):
    T = f32(4.0 / f32(float(N - 1)))
    C = f32(0.1)
    src = list(h)
    for _ in range(passes):
        dst = [0.0] * (N * N)
        for i in range(N * N):
            hh = src[i]
            moved = 0.0
            for k, dx, dy in NB[i]:
                if isinstance(k, tuple): continue  # outside the grid: none
                d = f32(hh - src[k])
                if d > T: e = f32(d - T)
                elif d < -T: e = f32(d + T)
                else: e = 0.0
                moved = f32(moved + f32(e * C))
            dst[i] = f32(hh - moved)
        src = dst
    return src

def hmin(a, b): return b if b < a else a
def hmax(a, b): return b if a < b else a

def hydraulic(N, h, steps, sea_str, NB):
    q = f32(512.0 / f32(float(N - 1)))
    GD = hexf('0x1.6a09e6p-1f')
    KF = hmin(f32(f32(0.125) / q), 0.5)
    FMAX = 0.5
    RAIN = f32(f32(5e-6) * q)
    KEEP = f32(1.0 - f32(f32(0.001) * q))
    KC = f32(f32(1e6) / q)
    KE = hmin(f32(f32(0.3) * q), 1.0)
    KD = hmin(f32(f32(0.3) * q), 1.0)
    KS = hmin(f32(f32(0.015) / q), f32(0.2))
    KS4 = f32(KS * 0.25)
    KA = hmin(f32(f32(0.1) * q), 1.0)
    EPS = 2.0 ** -40
    def ftz(x): return 0.0 if abs(x) < EPS else x
    SEA = ftz(f32(float(sea_str))) + 0.0  # flushed; -0 is taken as +0
    def rcp(m):
        r = frombits(0x7EF311C3 - bits(m))
        for _ in range(3):
            r = f32(r * f32(2.0 - f32(m * r)))
        return r
    def weight(d, g, p):
        t = ftz(f32(f32(d * g) * p)); t2 = ftz(f32(t * t)); return ftz(f32(t2 * t2))
    # neighbour lists in spec order: (k, g, c, ghost), a ghost's k the pair
    # (e, j) of neighbours()
    def gc(dx, dy):
        side = dx == 0 or dy == 0
        return (1.0, KS) if side else (GD, KS4)
    NBg = [[(k,) + gc(dx, dy) + (isinstance(k, tuple),) for k, dx, dy in lst]
           for lst in NB]
    n = N * N
    b = [ftz(x) for x in h]
    w = [ftz(f32(SEA - bb)) if bb < SEA else 0.0 for bb in b]
    s = [0.0] * n
    a = list(w)
    b0 = list(b)
    def surf(k, ghost):
        if not ghost:
            return f32(b[k] + w[k])
        e, j = k
        he = f32(b[e] + w[e])
        return f32(he + f32(he - f32(b[j] + w[j])))
    def ground(k, ghost):
        if not ghost:
            return b[k]
        e, j = k
        return b0[e]
    for _ in range(steps):
        P = [0.0] * n; Q = [0.0] * n
        for i in range(n):
            H = f32(b[i] + w[i])
            ds = [ftz(f32(H - surf(k, gh))) for k, g, c, gh in NBg[i]]
            dmax = 0.0
            for (k, g, c, gh), d in zip(NBg[i], ds):
                dmax = hmax(dmax, f32(d * g))
            Pi = rcp(dmax) if dmax > 0 else 0.0
            sm = 0.0
            for (k, g, c, gh), d in zip(NBg[i], ds):
                if d > 0: sm = f32(sm + weight(d, g, Pi))
            F = hmin(FMAX, f32(f32(dmax * KF) * rcp(hmax(w[i], EPS))))
            Q[i] = f32(F * rcp(sm)) if sm > 0 else 0.0
            P[i] = Pi
        nb = [0.0] * n; nw = [0.0] * n; ns = [0.0] * n
        for i in range(n):
            bi = b[i]; wi = w[i]; si = s[i]
            H = f32(bi + wi)
            out = 0.0; win = 0.0; sin_ = 0.0; drop = 0.0; creep = 0.0
            for k, g, c, gh in NBg[i]:
                d = ftz(f32(H - surf(k, gh)))
                if d > 0:
                    out = f32(out + ftz(f32(weight(d, g, P[i]) * Q[i])))
                if gh:
                    # a ghost: gives nothing, no creep (SPEC "The world's edge")
                    drop = hmax(drop, f32(ftz(f32(bi - ground(k, gh))) * g))
                    continue
                if d < 0:
                    fk = ftz(f32(weight(-d, g, P[k]) * Q[k]))
                    win = f32(win + f32(w[k] * fk))
                    sin_ = f32(sin_ + f32(s[k] * fk))
                e = ftz(f32(bi - b[k]))
                drop = hmax(drop, f32(e * g))
                creep = f32(creep + f32(e * c))
            wo = ftz(f32(wi * out))
            w1 = ftz(hmax(f32(f32(wi - wo) + win), 0.0))
            s1 = ftz(hmax(f32(f32(si - f32(si * out)) + sin_), 0.0))
            cap = ftz(f32(f32(ftz(f32(wo * wo)) * drop) * KC))
            if s1 < cap:
                e = hmin(ftz(f32(f32(cap - s1) * KE)), f32(drop * 0.5))
                b1 = f32(bi - e); s2 = f32(s1 + e)
            else:
                e = ftz(f32(f32(s1 - cap) * KD))
                b1 = f32(bi + e); s2 = f32(s1 - e)
            b1 = ftz(f32(ftz(b1) - creep))
            s2 = ftz(s2)
            w2 = ftz(f32(SEA - b1)) if b1 < SEA else ftz(f32(f32(w1 + RAIN) * KEEP))
            nb[i] = b1; nw[i] = w2; ns[i] = s2
            a[i] = ftz(f32(a[i] + ftz(f32(f32(w2 - a[i]) * KA))))
        b, w, s = nb, nw, ns
    if steps >= 1:
        height = list(b)
        water = [w[i] if b[i] < SEA else a[i] for i in range(n)]
        sed = [f32(b[i] - b0[i]) for i in range(n)]
    else:
        height = list(b); water = list(w); sed = [0.0] * n
    return height, water, sed

def run(N, octaves, passes, steps, sea, seed):
    L = lattice(seed)
    NB = neighbours(N)
    h1 = terrain(N, octaves, L)
    h2 = thermal(N, h1, passes, NB)
    h3, w3, s3 = hydraulic(N, h2, steps, sea, NB)
    return L, h1, h2, h3, w3, s3

def write_raw(path, vals):
    with open(path, 'wb') as f:
        f.write(b''.join(_S.pack(v) for v in vals))

# The outputs as a set: each to a temporary beside it, then all renamed.  A
# write that fails (a full disk, a file size limit, a signal) leaves the set
# an earlier run wrote and no temporary: written in place, the first had
# been left truncated among the others' old contents.  The signals wait
# while the set is renamed (and while the temporaries go): one between two
# renames had left the new first outputs among the old others.
SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}

# outputs: (name, the file it names, values); each file's temporary is
# beside it.
def write_set(outputs):
    tmps = []
    try:
        for name, path, vals in outputs:
            tmps.append('%s.tmp.%d' % (path, os.getpid()))
            try:
                write_raw(tmps[-1], vals)
            except OSError as e:
                e.filename = name  # the output, not its temporary
                raise
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
        try:
            for (_, path, _), tmp in zip(outputs, tmps):
                os.replace(tmp, path)
            tmps = []
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    finally:
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
        for tmp in tmps:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)

# The file an output's name leads to, as worldgen's outputs follow links: a
# symbolic link is written through to its final target (made where it
# dangles), not replaced by a file of its own (os.replace renames over
# the link).  Another user's link in a sticky folder anyone may write in
# (/tmp) is not followed, as the kernel's fs.protected_symlinks would not
# let open() follow it: it is how that user makes us write over our own
# files.  Returns the path, or raises OSError.
def final_target(path):
    for _ in range(40):
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return path
        if not stat.S_ISLNK(st.st_mode):
            return path
        folder = os.path.dirname(path) or '.'
        ds = os.stat(folder)
        if (ds.st_mode & stat.S_ISVTX and ds.st_mode & stat.S_IWOTH
                and st.st_uid not in (os.geteuid(), ds.st_uid)):
            raise OSError(errno.EACCES, "it is another user's symbolic link in the "
                          "sticky folder '%s', which is not followed" % folder, path)
        path = os.path.join(folder, os.readlink(path))
    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)

def on_signal(sig, frame):
    sys.exit(128 + sig)  # through write_set's finally

# The arguments' forms and ranges, worldgen's (options.c's parse_u64 and
# parse_float, backends/spec.h's limits): a whole number is decimal or 0x
# hex, with no sign, space, '_' or other base (which int() would take); a
# number is decimal (no nan, inf, hex or '_', which float() would take).
def whole(lo, hi):
    def parse(v):
        if re.fullmatch(r'[0-9]+', v):
            # int() refuses over 4300 digits: out of range all the same
            n = int(v, 10) if len(v.lstrip('0')) <= 20 else hi + 1
        elif re.fullmatch(r'0[xX][0-9a-fA-F]+', v):
            n = int(v, 16)
        else:
            raise argparse.ArgumentTypeError(
                "'%s' is not a whole number (valid: %d..%d, decimal or 0x hex)" % (v, lo, hi))
        if not lo <= n <= hi:
            raise argparse.ArgumentTypeError("'%s' is out of range (valid: %d..%d)" % (v, lo, hi))
        return n
    return parse

def sea_level(v):
    if not re.fullmatch(r'[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?', v):
        raise argparse.ArgumentTypeError("'%s' is not a number (valid: 0..1)" % v)
    if not 0.0 <= float(v) <= 1.0:
        raise argparse.ArgumentTypeError("'%s' is out of range (valid: 0..1)" % v)
    return v  # the text: hydraulic() rounds it to binary32 as the SPEC says

OUTPUTS = ('_stage1.f32', '_stage2.f32', '_height.f32', '_water.f32', '_sediment.f32')

if __name__ == '__main__':
    ap = argparse.ArgumentParser()
    ap.add_argument('--size', type=whole(2, 65536), required=True,
                    help='vertices per side, 2..65536')
    ap.add_argument('--octaves', type=whole(1, 16), default=6, help='1..16 (default 6)')
    ap.add_argument('--erosion', type=whole(0, 10000), required=True,
                    help='thermal erosion passes, 0..10000')
    ap.add_argument('--hydraulic', type=whole(0, 100000), required=True,
                    help='hydraulic steps, 0..100000')
    ap.add_argument('--sea-level', type=sea_level, default='0.25', help='0..1 (default 0.25)')
    ap.add_argument('--seed', type=whole(0, M64), default='1234',
                    help='unsigned 64-bit, decimal or 0x hex (default 1234)')
    ap.add_argument('--prefix', required=True,
                    help='the outputs are PREFIX' + ', PREFIX'.join(OUTPUTS))
    a = ap.parse_args()
    # A termination runs write_set's clean-up too (SIGINT does, as
    # KeyboardInterrupt; Python ignores SIGXFSZ: a file size limit is an
    # OSError).
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    # The outputs' folder, before minutes of computing.
    paths = []
    for suffix in OUTPUTS:
        name = a.prefix + suffix
        try:
            path = final_target(name)
        except OSError as e:
            ap.error("argument --prefix: cannot write '%s': %s" % (name, e.strerror))
        paths.append(path)
        folder = os.path.dirname(path) or '.'
        if not os.path.isdir(folder):
            ap.error("argument --prefix: cannot write '%s': the folder '%s' does not exist"
                     % (path, folder))
        if not os.access(folder, os.W_OK | os.X_OK):
            ap.error("argument --prefix: cannot write '%s': the folder '%s' is not writable"
                     % (path, folder))
        if os.path.isdir(path):
            ap.error("argument --prefix: cannot write '%s': it is a directory" % path)
    try:
        L, h1, h2, h3, w3, s3 = run(a.size, a.octaves, a.erosion, a.hydraulic,
                                    a.sea_level, a.seed)
        oom = False
    except MemoryError:
        oom = True  # said once the lists the traceback holds are let go
    if oom:  # (a traceback had been all)
        sys.exit('%s: not enough memory for the lists of a %dx%d world'
                 % (ap.prog, a.size, a.size))
    try:
        write_set(list(zip([a.prefix + x for x in OUTPUTS], paths,
                           (h1, h2, h3, w3, s3))))
    except OSError as e:
        sys.exit('%s: cannot write %s: %s' % (ap.prog, e.filename, e.strerror or e))
