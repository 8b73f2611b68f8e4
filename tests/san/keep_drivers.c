/* keep_drivers.c: linked into ./worldgen and tests/run in sanitized builds
 * only (make SAN=1), never into a release.
 *
 * LeakSanitizer looks for leaks when the process exits, after libraries
 * loaded at run time may have been unloaded: the Vulkan loader unloads
 * Mesa's lavapipe (its 2 x 128 bytes of realloc'd driver state: not ours,
 * vulkan_close() destroys every object it made) and the validation layer
 * with the last instance, and SDL unloads the X libraries it opened at
 * SDL_Quit (112 bytes in 2 blocks under --show).  Their blocks then have no
 * module to name, and tests/lsan.supp's 'leak:libvulkan_lvp.so',
 * 'leak:libX11.so' cannot match them.  So nothing is unloaded: dlclose,
 * defined here in the executable, comes before libc's for every caller
 * (the loader, SDL, worldgen's own), and keeps every library to the end.
 *
 * (Loading lavapipe and the layer once more, never to be unloaded, from a
 * constructor had kept their names, but it loaded LLVM into every
 * sanitized process: 0.15 s of each start, most of which never touch
 * Vulkan; and it could not know SDL's libraries.) */
int dlclose(void *handle);

int dlclose(void *handle)
{
    (void)handle;
    return 0;
}
