export { builderCode } from "./builder-code";
