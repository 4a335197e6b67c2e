// Reading a file a user names (Python: core/userfiles.py `read_bytes`, `kind_of`, `reason`): a regular file only,
// opened without blocking (a FIFO with no writer never hangs, /dev/zero is never read), at most `limit` bytes
// whatever the file claims. The messages are the Python module's, word for word:
//   PM100 `<file>: cannot read the <what>: <cause>` or `<file>: the <what> is a FIFO (named pipe); promptmill
//   reads regular files only`; PM105 `<file>: the <what> is N bytes; the limit is L bytes`.

import { closeSync, constants, fstatSync, openSync, readSync, realpathSync, type Stats } from "node:fs";
import { PromptmillError } from "./errors.js";

/** A file type in words, as Python's `kind_of` gives it. */
export function kindOf(st: Stats): string {
  if (st.isDirectory()) return "a folder";
  if (st.isFIFO()) return "a FIFO (named pipe)";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "a device";
  if (st.isSocket()) return "a socket";
  return "not a regular file";
}

// glibc's strerror() for the errors an open or a read can give, as Python's OSError.strerror words them
// (libuv's own words differ: "illegal operation on a directory" for EISDIR, all in lower case)
const STRERROR: Record<string, string> = {
  EACCES: "Permission denied",
  EPERM: "Operation not permitted",
  ENXIO: "No such device or address",
  ENODEV: "No such device",
  EISDIR: "Is a directory",
  ENOTDIR: "Not a directory",
  EIO: "Input/output error",
  EMFILE: "Too many open files",
  ENFILE: "Too many open files in system",
  ETXTBSY: "Text file busy",
  EOVERFLOW: "Value too large for defined data type",
  EINVAL: "Invalid argument",
  EAGAIN: "Resource temporarily unavailable",
  ENOMEM: "Cannot allocate memory",
  EROFS: "Read-only file system",
  EBUSY: "Device or resource busy",
  EINTR: "Interrupted system call",
  ESTALE: "Stale file handle",
  EFBIG: "File too large",
  EBADF: "Bad file descriptor",
};

/** An error's cause in words, as Python's `reason(OSError)` gives it. */
export function reason(exc: unknown): string {
  const err = exc as NodeJS.ErrnoException;
  if (err.code === "ENOENT") return "it does not exist";
  if (err.code === "ENAMETOOLONG") return "the name is longer than the file system allows";
  if (err.code === "ELOOP") return "a symbolic link loops, or the file is a link promptmill does not follow";
  if (err.code && STRERROR[err.code]) return STRERROR[err.code];
  // another code: libuv's words ("CODE: words, open 'file'"), capitalised as strerror's are
  const words = /^[A-Z0-9_]+: ([^,]+)/.exec(err.message ?? "")?.[1] ?? String(exc);
  return words.charAt(0).toUpperCase() + words.slice(1);
}

const MiB = 1 << 20;

/** `str(pathlib.PurePosixPath(path))`, as Python shows a path it was given: no "." parts, no repeated or trailing
 *  "/" (a leading "//" is kept, as POSIX allows). */
export function pyPath(path: string): string {
  if (path === "") return ".";
  const root = path.startsWith("//") && !path.startsWith("///") ? "//" : path.startsWith("/") ? "/" : "";
  const parts = path.split("/").filter((part) => part !== "" && part !== ".");
  return root + parts.join("/") || ".";
}

/** Python's `f"{n:,}"`. */
const grouped = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

function tooLarge(shown: string, what: string, limit: number, size: number | null): PromptmillError {
  const said = size !== null ? `${grouped(size)} bytes` : "larger than that";
  return new PromptmillError("PM105", `${shown}: the ${what} is ${said}; the limit is ${grouped(limit)} bytes`, "promptmill reads files up to that size");
}

/** PM017 when a symbolic link takes `path` out of `root` (Python: core/userfiles.py `check_inside`, with its words).
 * A path that does not resolve (missing, a dangling link) is left to the read, which says so. */
export function checkInside(path: string, root: string, what = "file"): void {
  let real: string;
  let realRoot: string;
  try {
    real = realpathSync(path);
    realRoot = realpathSync(root);
  } catch {
    return;
  }
  if (real === realRoot || real.startsWith(realRoot.endsWith("/") ? realRoot : `${realRoot}/`)) return;
  throw new PromptmillError(
    "PM017",
    `${pyPath(path)}: the ${what} is behind a symbolic link that leads out of ${pyPath(root)} (to ${real})`,
    "promptmill reads and writes only inside the folder it works in; copy the file in, or remove the link",
  );
}

/** A regular file's bytes, at most `limit`: PM100 (cannot be read, not a regular file), PM105 (too large). */
export function readBytes(path: string, limit: number, what = "file"): Buffer {
  const shown = pyPath(path);
  const cannot = (exc: unknown) => new PromptmillError("PM100", `${shown}: cannot read the ${what}: ${reason(exc)}`);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (exc) {
    throw cannot(exc);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) {
      throw new PromptmillError("PM100", `${shown}: the ${what} is ${kindOf(st)}; promptmill reads regular files only`, "name a regular file");
    }
    if (st.size > limit) throw tooLarge(shown, what, limit, st.size);
    while (size <= limit) {
      // at most limit+1 bytes, whatever fstat said
      const buf = Buffer.allocUnsafe(Math.min(limit + 1 - size, MiB));
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      chunks.push(n === buf.length ? buf : buf.subarray(0, n));
      size += n;
    }
  } catch (exc) {
    if (exc instanceof PromptmillError) throw exc;
    throw cannot(exc);
  } finally {
    closeSync(fd);
  }
  if (size > limit) throw tooLarge(shown, what, limit, null);
  return Buffer.concat(chunks, size);
}
