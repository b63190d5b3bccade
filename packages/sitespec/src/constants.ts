export const SITE_SPEC_API_VERSION = "nvke.io/v1alpha1";
export const SITE_SPEC_KIND = "SiteSpec";
/** The port each host's nvke-agent listens on, unless the spec says otherwise. */
export const DEFAULT_AGENT_PORT = 8443;
