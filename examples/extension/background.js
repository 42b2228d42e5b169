// Clicking the toolbar button opens the session page in a tab.
chrome.action.onClicked.addListener(() => {
  chrome.tabs.create({ url: chrome.runtime.getURL("session.html") });
});
