//! Size strings.
