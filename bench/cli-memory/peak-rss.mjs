// Loaded with `node --import`: when the process exits, writes its peak resident memory (KiB, from
// process.resourceUsage) to the file X402_PEAK_RSS_FILE names. The command's own code is untouched.
import { writeFileSync } from "node:fs";

const file = process.env.X402_PEAK_RSS_FILE;
if (file) process.on("exit", () => writeFileSync(file, String(process.resourceUsage().maxRSS)));
