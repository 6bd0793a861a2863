export { authCaptureEvm, type AuthCaptureEvmOptions } from "./scheme";
export { AUTH_CAPTURE, AUTH_CAPTURE_DEPLOYMENTS, type AuthCaptureDeployment } from "./wire";
